package vm

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/api/kubevirt/v1/validation"
	"github.com/vmctl/vmctl/controller"
	"github.com/vmctl/vmctl/pkg/launcherpods"
)

// Event reasons, as KubeVirt records them.
const (
	SuccessfulCreate = "SuccessfulCreate"
	SuccessfulDelete = "SuccessfulDelete"
	FailedCreate     = "FailedCreate"
	FailedDelete     = "FailedDelete"
)

// sync reconciles one VirtualMachine: it reads from the listers, decides, acts at most once
// per expectation, and writes status only when it changed.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.vmLister.VirtualMachines(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		c.written.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	vm := cached.DeepCopy()
	now := c.clock.Now()

	vmi, syncErr := c.claimInstance(ctx, vm)
	var pinErr error
	if usesInstancetypes(vm) && vm.DeletionTimestamp == nil {
		pinErr = c.pin(ctx, vm)
	}
	strategy, strategyErr := vm.Spec.EffectiveRunStrategy()
	vm.Status.StartFailure = nextStartFailure(vm.Status.StartFailure, vmi, now, c.jitter)

	var p plan
	if syncErr == nil && strategyErr == nil && vm.DeletionTimestamp == nil && c.expectations.Satisfied(key) {
		p = decide(vm, vmi, strategy, now)
		vm.Status.StateChangeRequests = p.requests
		var created *v1.VirtualMachineInstance
		created, syncErr = c.act(ctx, key, vm, vmi, p, pinErr)
		if controller.NamespaceTerminating(syncErr) {
			return nil // the VM goes with its namespace
		}
		if created != nil {
			// Report the new instance at once: one status write per start, not two.
			vmi = created
		}
		if p.backoff > 0 {
			c.queue.AddAfter(key, p.backoff)
		}
	}
	if strategyErr != nil {
		syncErr = strategyErr
	}
	if syncErr == nil {
		syncErr = pinErr
	}
	o := observed{vm: vm, vmi: vmi, pod: c.launcherPod(vmi), starting: p.createVMI || c.expectations.CreationsPending(key), backingOff: p.backoff > 0}
	// Report a stop at once, as a start is: the cached instance may not show its deletion yet.
	o.stopping = vmi != nil && c.expectations.DeletionPending(key, vmi.UID)
	c.updateStatusFields(vm, o, strategy, syncErr)
	// A status computed from a copy this controller's last write replaced would be refused;
	// the watch event of that write syncs the VM again.
	if !equality.Semantic.DeepEqual(cached.Status, vm.Status) && !c.written.Stale(key, cached.ResourceVersion) {
		if _, err := c.virt.KubevirtV1().VirtualMachines(namespace).UpdateStatus(ctx, vm, metav1.UpdateOptions{}); err != nil {
			return err
		}
		c.written.Wrote(key, cached.ResourceVersion)
	}
	if strategyErr != nil || apierrors.IsInvalid(syncErr) || errors.Is(syncErr, errForeignOwner) || errors.Is(syncErr, errTypeUnavailable) {
		// Bad input is reported in the status and an event; retrying cannot fix it. A missing
		// instance type or preference enqueues the VM when it appears.
		return nil
	}
	return syncErr
}

// act carries out a plan: delete the current instance, or create a new one and return it.
func (c *Controller) act(ctx context.Context, key string, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, p plan, pinErr error) (*v1.VirtualMachineInstance, error) {
	if p.runStrategy != "" {
		return nil, c.updateSpec(ctx, vm, func(spec *v1.VirtualMachineSpec) { spec.SetRunStrategy(p.runStrategy) })
	}
	if p.deleteVMI {
		return nil, c.deleteInstance(ctx, key, vm, vmi)
	}
	if p.createVMI {
		return c.createInstance(ctx, key, vm, pinErr, p.startPaused)
	}
	return nil, nil
}

func (c *Controller) deleteInstance(ctx context.Context, key string, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) error {
	c.expectations.ExpectDeletions(key, vmi.UID)
	err := c.virt.KubevirtV1().VirtualMachineInstances(vm.Namespace).Delete(ctx, vmi.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(vmi.UID)}})
	if err != nil && !apierrors.IsNotFound(err) {
		c.expectations.DeletionObserved(key, vmi.UID)
		c.recorder.Eventf(vm, corev1.EventTypeWarning, FailedDelete, "Error deleting virtual machine instance %s: %v", vmi.Name, err)
		return err
	}
	c.recorder.Eventf(vm, corev1.EventTypeNormal, SuccessfulDelete, "Stopped the virtual machine by deleting the virtual machine instance %s", vmi.UID)
	return nil
}

// createInstance creates the VM's instance from its template, with its instance type and
// preference expanded from the copies pinned in its status (pinErr: why they could not be),
// paused when a start request asked for it.
func (c *Controller) createInstance(ctx context.Context, key string, vm *v1.VirtualMachine, pinErr error, paused bool) (*v1.VirtualMachineInstance, error) {
	err := pinErr
	var it *itv1beta1.VirtualMachineInstancetypeSpec
	var pref *itv1beta1.VirtualMachinePreferenceSpec
	if err == nil {
		it, pref, err = c.pinnedSpecs(ctx, vm)
	}
	var tmpl *v1.VirtualMachineInstanceTemplateSpec
	if err == nil {
		tmpl, err = instanceTemplate(vm, it, pref)
	}
	if err != nil {
		c.recorder.Eventf(vm, corev1.EventTypeWarning, FailedCreate, "Cannot create a virtual machine instance: %v", err)
		return nil, err
	}
	// The spec checked is the one the instance gets: with an instance type, the expanded one.
	expanded := vm.Spec
	expanded.Template = tmpl
	if errs := validation.ValidateVirtualMachineSpec(field.NewPath("spec"), &expanded); len(errs) > 0 {
		err := apierrors.NewInvalid(vmKind.GroupKind(), vm.Name, errs)
		c.recorder.Eventf(vm, corev1.EventTypeWarning, FailedCreate, "Cannot create a virtual machine instance: %v", errs.ToAggregate())
		return nil, err
	}
	if err := c.ensureFirmwareUUID(ctx, vm); err != nil {
		return nil, err
	}
	// Again: the firmware UUID may have just been added to the template.
	if tmpl, err = instanceTemplate(vm, it, pref); err != nil {
		return nil, err
	}
	vmi := renderInstance(vm, tmpl, pref)
	if paused {
		vmi.Spec.StartStrategy = ptr.To(v1.StartStrategyPaused)
	}
	c.expectations.ExpectCreations(key, 1)
	created, err := c.virt.KubevirtV1().VirtualMachineInstances(vm.Namespace).Create(ctx, vmi, metav1.CreateOptions{})
	if err != nil {
		c.expectations.CreationObserved(key)
		if !controller.NamespaceTerminating(err) {
			c.recorder.Eventf(vm, corev1.EventTypeWarning, FailedCreate, "Error creating virtual machine instance: %v", err)
		}
		return nil, err
	}
	c.recorder.Eventf(vm, corev1.EventTypeNormal, SuccessfulCreate, "Started the virtual machine by creating the new virtual machine instance %s", created.Name)
	return created, nil
}

// ensureFirmwareUUID persists a random firmware UUID into the template at first start, so the
// guest sees the same system UUID across restarts and no two VMs share one, whatever their
// names and namespaces.
func (c *Controller) ensureFirmwareUUID(ctx context.Context, vm *v1.VirtualMachine) error {
	domain := &vm.Spec.Template.Spec.Domain
	if domain.Firmware != nil && domain.Firmware.UUID != "" {
		return nil
	}
	err := c.updateSpec(ctx, vm, func(spec *v1.VirtualMachineSpec) {
		domain := &spec.Template.Spec.Domain
		if domain.Firmware == nil {
			domain.Firmware = &v1.Firmware{}
		}
		domain.Firmware.UUID = newUUID()
	})
	if err != nil {
		return fmt.Errorf("persisting the firmware UUID: %w", err)
	}
	return nil
}

// updateSpec writes a change to the VM's spec and carries on with the stored object (new
// resourceVersion) and the status computed so far.
func (c *Controller) updateSpec(ctx context.Context, vm *v1.VirtualMachine, change func(*v1.VirtualMachineSpec)) error {
	status := vm.Status
	change(&vm.Spec)
	updated, err := c.virt.KubevirtV1().VirtualMachines(vm.Namespace).Update(ctx, vm, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	updated.Status = status
	*vm = *updated
	return nil
}

// launcherPod is the instance's launcher pod from the cache, for the printable status.
func (c *Controller) launcherPod(vmi *v1.VirtualMachineInstance) *corev1.Pod {
	if vmi == nil {
		return nil
	}
	pods, err := c.launchers.Claiming(vmi)
	if err != nil {
		return nil
	}
	if active := launcherpods.Active(vmi, pods); len(active) > 0 {
		return active[0]
	}
	return nil
}

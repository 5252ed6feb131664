package replicaset

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/api/kubevirt/v1/validation"
)

// Event reasons, as KubeVirt records them, plus InvalidSpec for a spec the controller cannot
// act on.
const (
	SuccessfulCreate  = "SuccessfulCreate"
	SuccessfulDelete  = "SuccessfulDelete"
	FailedCreate      = "FailedCreate"
	FailedDelete      = "FailedDelete"
	SuccessfulPaused  = "SuccessfulPaused"
	SuccessfulResumed = "SuccessfulResumed"
	InvalidSpec       = "InvalidSpec"
)

// sync reconciles one replica set: it reads from the listers, settles ownership, creates or
// deletes at most once per expectation, and writes status only when it changed.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.rsLister.VirtualMachineInstanceReplicaSets(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	rs := cached.DeepCopy()
	all, err := c.vmiLister.VirtualMachineInstances(namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	if errs := validation.ValidateReplicaSetSpec(field.NewPath("spec"), &rs.Spec); len(errs) > 0 {
		return c.reportInvalid(ctx, cached, rs, all, errs)
	}
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return nil // validated above
	}

	var vmis []*v1.VirtualMachineInstance
	if rs.DeletionTimestamp != nil {
		// Being deleted: the garbage collector takes the instances; only count them.
		vmis = controlled(rs, all, selector)
	} else if vmis, err = c.claimInstances(ctx, rs, selector, all); err != nil {
		return err
	}
	active, finished := partition(vmis)
	var syncErr error
	if rs.DeletionTimestamp == nil && !rs.Spec.Paused && c.expectations.Satisfied(key) {
		syncErr = c.manage(ctx, key, rs, active, finished)
	}
	c.updateStatusFields(rs, active, syncErr)
	if err := c.writeStatus(ctx, cached, rs); err != nil {
		return err
	}
	return syncErr
}

// manage replaces finished instances and brings the active ones to spec.replicas, at most
// burst creations or deletions at a time.
func (c *Controller) manage(ctx context.Context, key string, rs *v1.VirtualMachineInstanceReplicaSet,
	active, finished []*v1.VirtualMachineInstance) error {
	var errs []error
	if len(finished) > 0 {
		// KubeVirt's behaviour: a finished replica never runs again, so it is deleted and,
		// as it no longer counts as active, replaced below.
		errs = append(errs, c.deleteInstances(ctx, key, rs, finished[:min(len(finished), c.burst)]))
	}
	switch diff := len(active) - int(ptr.Deref(rs.Spec.Replicas, 1)); {
	case diff < 0:
		errs = append(errs, c.createInstances(ctx, key, rs, min(-diff, c.burst)))
	case diff > 0:
		errs = append(errs, c.deleteInstances(ctx, key, rs, surplus(active, min(diff, c.burst))))
	}
	return errors.Join(errs...)
}

// reportInvalid handles a spec the controller cannot act on (a bad selector, or a template
// its selector does not match). Retrying cannot fix it and a spec update enqueues the replica
// set again, so it reports the problem and returns nil instead of an error.
func (c *Controller) reportInvalid(ctx context.Context, cached, rs *v1.VirtualMachineInstanceReplicaSet,
	all []*v1.VirtualMachineInstance, errs field.ErrorList) error {
	err := errs.ToAggregate()
	// Every instance event syncs the replica set again: warn once per problem, not each time.
	if failure := condition(&rs.Status, v1.VirtualMachineInstanceReplicaSetReplicaFailure); failure == nil || failure.Message != err.Error() {
		c.recorder.Eventf(rs, corev1.EventTypeWarning, InvalidSpec, "Not managing virtual machine instances: %v", err)
		logger(ctx, rs).Info("Invalid replica set spec, not retrying", "err", err)
	}
	active, _ := partition(controlled(rs, all, labels.Everything()))
	c.updateStatusFields(rs, active, &replicaError{reason: InvalidSpec, err: err})
	return c.writeStatus(ctx, cached, rs)
}

// writeStatus writes the status when it differs from the cached one.
func (c *Controller) writeStatus(ctx context.Context, cached, rs *v1.VirtualMachineInstanceReplicaSet) error {
	if equality.Semantic.DeepEqual(cached.Status, rs.Status) {
		return nil
	}
	_, err := c.virt.KubevirtV1().VirtualMachineInstanceReplicaSets(rs.Namespace).UpdateStatus(ctx, rs, metav1.UpdateOptions{})
	return err
}

// controlled are the instances the replica set controls and selects, without claiming.
func controlled(rs *v1.VirtualMachineInstanceReplicaSet, all []*v1.VirtualMachineInstance, selector labels.Selector) []*v1.VirtualMachineInstance {
	var out []*v1.VirtualMachineInstance
	for _, vmi := range all {
		if ref := metav1.GetControllerOf(vmi); ref != nil && ref.UID == rs.UID && selector.Matches(labels.Set(vmi.Labels)) {
			out = append(out, vmi)
		}
	}
	return out
}

// partition splits instances: active ones count as replicas; finished ones (Succeeded or
// Failed) will never run again; terminating ones are in neither, they are as good as gone.
func partition(vmis []*v1.VirtualMachineInstance) (active, finished []*v1.VirtualMachineInstance) {
	for _, vmi := range vmis {
		switch {
		case vmi.DeletionTimestamp != nil:
		case vmi.Status.Phase.IsFinal():
			finished = append(finished, vmi)
		default:
			active = append(active, vmi)
		}
	}
	return active, finished
}

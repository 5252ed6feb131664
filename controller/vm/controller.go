// Package vm is the VirtualMachine controller: it keeps at most one instance of the same
// name per VirtualMachine, as its run strategy and state change requests say, and reports
// the outcome in the VirtualMachine's status.
package vm

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions/kubevirt/v1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/expectations"
	"github.com/vmctl/vmctl/pkg/instancetype"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/superseded"
	"github.com/vmctl/vmctl/pkg/workloop"
)

// ControllerName is the component name on events the controller records.
const ControllerName = "virtualmachine-controller"

var vmKind = v1.SchemeGroupVersion.WithKind("VirtualMachine")

// Controller reconciles VirtualMachines.
type Controller struct {
	virt      versioned.Interface
	kube      kubernetes.Interface
	vmLister  listers.VirtualMachineLister
	vmiLister listers.VirtualMachineInstanceLister
	launchers launcherpods.Pods
	synced    []cache.InformerSynced
	// Instance types and preferences (instancetypes.go).
	getter         instancetype.Getter
	revisionLister appslisters.ControllerRevisionLister
	vmIndexer      cache.Indexer

	queue        workqueue.TypedRateLimitingInterface[string]
	recorder     record.EventRecorder
	expectations *expectations.Expectations
	// written are the cached VMs whose status this controller has since replaced.
	written *superseded.Versions
	clock   clock.Clock
	jitter  func(time.Duration) time.Duration
}

// New wires the controller to its informers. Pods are watched only to summarise launcher
// trouble (unschedulable, image pulls) in the VirtualMachine's printable status; instance
// types and preferences to expand them and to start VMs that were waiting for one.
func New(virt versioned.Interface, kube kubernetes.Interface, vms informers.VirtualMachineInformer, vmis informers.VirtualMachineInstanceInformer,
	pods coreinformers.PodInformer, types Instancetypes, recorder record.EventRecorder) (*Controller, error) {
	launchers, err := launcherpods.Index(pods.Informer())
	if err != nil {
		return nil, err
	}
	c := &Controller{
		virt:         virt,
		kube:         kube,
		vmLister:     vms.Lister(),
		vmiLister:    vmis.Lister(),
		launchers:    launchers,
		synced:       []cache.InformerSynced{vms.Informer().HasSynced, vmis.Informer().HasSynced, pods.Informer().HasSynced},
		queue:        workloop.NewQueue("virtualmachine"),
		recorder:     recorder,
		expectations: expectations.New(),
		written:      superseded.New(),
		clock:        clock.RealClock{},
		jitter:       randomJitter,
	}
	if _, err := vms.Informer().AddEventHandler(workloop.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	if err := c.watchInstancetypes(vms.Informer(), types); err != nil {
		return nil, err
	}
	if _, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addVMI,
		UpdateFunc: c.updateVMI,
		DeleteFunc: c.deleteVMI,
	}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueForPod,
		UpdateFunc: func(_, obj any) { c.enqueueForPod(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes VirtualMachines with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	loop := workloop.Loop{Name: ControllerName, Queue: c.queue, Synced: c.synced, Sync: c.sync}
	return loop.Run(ctx, workers)
}

// vmKeyOf maps an instance to the key of the VirtualMachine that owns it, or that would
// adopt it: a VirtualMachine and its instance share namespace and name.
func vmKeyOf(vmi *v1.VirtualMachineInstance) (string, bool) {
	ref := metav1.GetControllerOf(vmi)
	if ref != nil && (ref.Kind != vmKind.Kind || ref.APIVersion != vmKind.GroupVersion().String()) {
		return "", false
	}
	return vmi.Namespace + "/" + vmi.Name, true
}

func (c *Controller) addVMI(obj any) {
	vmi := obj.(*v1.VirtualMachineInstance)
	if key, ok := vmKeyOf(vmi); ok {
		c.expectations.CreationObserved(key)
		c.queue.Add(key)
	}
}

func (c *Controller) updateVMI(_, obj any) {
	if key, ok := vmKeyOf(obj.(*v1.VirtualMachineInstance)); ok {
		c.queue.Add(key)
	}
}

func (c *Controller) deleteVMI(obj any) {
	vmi, ok := obj.(*v1.VirtualMachineInstance)
	if !ok {
		tombstone, isTombstone := obj.(cache.DeletedFinalStateUnknown)
		if vmi, ok = tombstone.Obj.(*v1.VirtualMachineInstance); !isTombstone || !ok {
			utilruntime.HandleError(fmt.Errorf("unexpected object in VMI delete handler: %T", obj))
			return
		}
	}
	if key, ok := vmKeyOf(vmi); ok {
		c.expectations.DeletionObserved(key, vmi.UID)
		c.queue.Add(key)
	}
}

// enqueueForPod maps a launcher pod to its instance's VirtualMachine.
func (c *Controller) enqueueForPod(obj any) {
	key, _, ok := launcherpods.InstanceKey(obj)
	if !ok {
		return
	}
	// A VirtualMachine and its instance share namespace and name.
	namespace, name, _ := cache.SplitMetaNamespaceKey(key)
	if _, err := c.vmLister.VirtualMachines(namespace).Get(name); err == nil {
		c.queue.Add(key)
	}
}

// logger is the controller's logger for one VirtualMachine.
func logger(ctx context.Context, vm *v1.VirtualMachine) klog.Logger {
	return klog.FromContext(ctx).WithValues("vm", klog.KObj(vm))
}

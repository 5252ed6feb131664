// Package replicaset is the VirtualMachineInstanceReplicaSet controller: it keeps the number of
// active instances matching a replica set's selector at spec.replicas, creating them from its
// template and deleting the surplus, as Kubernetes' ReplicaSet controller does for pods.
package replicaset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
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
	"github.com/vmctl/vmctl/pkg/workloop"
)

// ControllerName is the component name on events the controller records.
const ControllerName = "virtualmachineinstancereplicaset-controller"

// burstReplicas caps the creations or deletions of one sync, as the ReplicaSet controller's
// burstReplicas does, so one huge scale cannot flood the API server; the rest follows in the
// next syncs, which the observed creations and deletions trigger.
const burstReplicas = 250

var rsKind = v1.SchemeGroupVersion.WithKind("VirtualMachineInstanceReplicaSet")

// Controller reconciles VirtualMachineInstanceReplicaSets.
type Controller struct {
	virt      versioned.Interface
	rsLister  listers.VirtualMachineInstanceReplicaSetLister
	vmiLister listers.VirtualMachineInstanceLister
	synced    []cache.InformerSynced

	queue        workqueue.TypedRateLimitingInterface[string]
	recorder     record.EventRecorder
	expectations *expectations.Expectations
	burst        int
	clock        clock.PassiveClock
}

// New wires the controller to its informers; instances map to the replica set controlling
// them, or, when orphaned, to every replica set that could adopt them.
func New(virt versioned.Interface, rss informers.VirtualMachineInstanceReplicaSetInformer, vmis informers.VirtualMachineInstanceInformer,
	recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		virt:         virt,
		rsLister:     rss.Lister(),
		vmiLister:    vmis.Lister(),
		synced:       []cache.InformerSynced{rss.Informer().HasSynced, vmis.Informer().HasSynced},
		queue:        workloop.NewQueue("virtualmachineinstancereplicaset"),
		recorder:     recorder,
		expectations: expectations.New(),
		burst:        burstReplicas,
		clock:        clock.RealClock{},
	}
	if _, err := rss.Informer().AddEventHandler(workloop.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	if _, err := vmis.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addVMI,
		UpdateFunc: c.updateVMI,
		DeleteFunc: c.deleteVMI,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes replica sets with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	loop := workloop.Loop{Name: ControllerName, Queue: c.queue, Synced: c.synced, Sync: c.sync}
	return loop.Run(ctx, workers)
}

func (c *Controller) addVMI(obj any) {
	vmi := obj.(*v1.VirtualMachineInstance)
	if vmi.DeletionTimestamp != nil {
		// Seen for the first time already terminating (a restart of the controller): to the
		// replica set it is as good as gone.
		c.deleteVMI(vmi)
		return
	}
	if key, ok := c.controllerKey(vmi); ok {
		c.expectations.CreationObserved(key)
		c.queue.Add(key)
		return
	}
	c.enqueueAll(c.adoptersOf(vmi))
}

func (c *Controller) updateVMI(oldObj, obj any) {
	old, cur := oldObj.(*v1.VirtualMachineInstance), obj.(*v1.VirtualMachineInstance)
	if old.ResourceVersion == cur.ResourceVersion {
		return // a periodic resync: nothing changed
	}
	labelsChanged := !equality.Semantic.DeepEqual(old.Labels, cur.Labels)
	if cur.DeletionTimestamp != nil {
		// A terminating instance no longer counts: let its replica set replace it now
		// rather than when it is finally gone.
		c.deleteVMI(cur)
		if labelsChanged {
			c.deleteVMI(old)
		}
		return
	}
	oldRef, curRef := metav1.GetControllerOf(old), metav1.GetControllerOf(cur)
	refChanged := !equality.Semantic.DeepEqual(oldRef, curRef)
	if refChanged && oldRef != nil {
		// Released or taken over: the former owner must recount.
		if key, ok := c.controllerKey(old); ok {
			c.queue.Add(key)
		}
	}
	if key, ok := c.controllerKey(cur); ok {
		c.queue.Add(key)
		return
	}
	if curRef == nil && (labelsChanged || refChanged) {
		// Replica sets that matched the old labels may have to let go, those matching the
		// new ones may adopt.
		c.enqueueAll(c.adoptersOf(old).Union(c.adoptersOf(cur)))
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
	if key, ok := c.controllerKey(vmi); ok {
		c.expectations.DeletionObserved(key, vmi.UID)
		c.queue.Add(key)
	}
}

// controllerKey is the key of the replica set controlling the instance, when it exists in the
// cache with the UID of the reference (a recreated namesake is not the owner).
func (c *Controller) controllerKey(vmi *v1.VirtualMachineInstance) (string, bool) {
	ref := metav1.GetControllerOf(vmi)
	if ref == nil || ref.Kind != rsKind.Kind || ref.APIVersion != rsKind.GroupVersion().String() {
		return "", false
	}
	rs, err := c.rsLister.VirtualMachineInstanceReplicaSets(vmi.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return "", false
	}
	return vmi.Namespace + "/" + rs.Name, true
}

// adoptersOf are the keys of the replica sets whose selector matches an orphaned instance.
// Replica sets with an invalid or empty selector match nothing.
func (c *Controller) adoptersOf(vmi *v1.VirtualMachineInstance) sets.Set[string] {
	keys := sets.New[string]()
	if metav1.GetControllerOf(vmi) != nil {
		return keys
	}
	rss, err := c.rsLister.VirtualMachineInstanceReplicaSets(vmi.Namespace).List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return keys
	}
	for _, rs := range rss {
		selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || selector.Empty() || !selector.Matches(labels.Set(vmi.Labels)) {
			continue
		}
		keys.Insert(rs.Namespace + "/" + rs.Name)
	}
	return keys
}

func (c *Controller) enqueueAll(keys sets.Set[string]) {
	for key := range keys {
		c.queue.Add(key)
	}
}

// logger is the controller's logger for one replica set.
func logger(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet) klog.Logger {
	return klog.FromContext(ctx).WithValues("vmirs", klog.KObj(rs))
}

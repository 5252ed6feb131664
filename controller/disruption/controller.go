// Package disruption is virt-controller's disruption budget controller: an instance whose
// evictionStrategy says a drain must not simply evict its launcher pod gets a
// PodDisruptionBudget over that pod, as KubeVirt's does. An eviction (kubectl drain) is then
// refused with 429 and retried by the drain until the pod goes another way: with External,
// the controller that owns the VM (vmctl: when its own pod is evicted, within that pod's
// budget) deletes the VM and so the launcher pod.
package disruption

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyinformers "k8s.io/client-go/informers/policy/v1"
	"k8s.io/client-go/kubernetes"
	policylisters "k8s.io/client-go/listers/policy/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	kubevirtv1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	virtinformers "github.com/vmctl/vmctl/client/informers/externalversions/kubevirt/v1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/workloop"
)

// Controller keeps one PodDisruptionBudget per instance that needs one.
type Controller struct {
	kube      kubernetes.Interface
	vmiLister listers.VirtualMachineInstanceLister
	pdbLister policylisters.PodDisruptionBudgetLister
	loop      *workloop.Loop
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New wires the controller to the instance informer and an informer of the budgets it makes
// (Budget's label).
func New(kube kubernetes.Interface, vmis virtinformers.VirtualMachineInstanceInformer, pdbs policyinformers.PodDisruptionBudgetInformer) (*Controller, error) {
	c := &Controller{
		kube:      kube,
		vmiLister: vmis.Lister(),
		pdbLister: pdbs.Lister(),
		queue:     workloop.NewQueue("disruption"),
	}
	c.loop = &workloop.Loop{Name: "disruption", Queue: c.queue,
		Synced: []cache.InformerSynced{vmis.Informer().HasSynced, pdbs.Informer().HasSynced}, Sync: c.sync}
	// Only instances that need a budget: the rest (most) never reach the queue.
	if _, err := vmis.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj any) bool {
			vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
			return ok && Protected(vmi)
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { workloop.Enqueue(c.queue, obj) },
			UpdateFunc: func(_, obj any) { workloop.Enqueue(c.queue, obj) },
		},
	}); err != nil {
		return nil, err
	}
	// A budget deleted by hand is made again for its instance.
	if _, err := pdbs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: c.enqueueOwner,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) enqueueOwner(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "VirtualMachineInstance" {
		c.queue.Add(o.GetNamespace() + "/" + ref.Name)
	}
}

// Run processes instances until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error { return c.loop.Run(ctx, workers) }

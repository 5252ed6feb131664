package vmi

import (
	"context"

	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions/kubevirt/v1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/controller/expectations"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/superseded"
	"github.com/vmctl/vmctl/pkg/workloop"
)

// ControllerName is the component name on events the controller records.
const ControllerName = "virtualmachineinstance-controller"

// Controller reconciles VirtualMachineInstances with their launcher pods.
type Controller struct {
	kube      kubernetes.Interface
	virt      versioned.Interface
	vmiLister listers.VirtualMachineInstanceLister
	// vmiIndexer finds the instances that name a claim (claimIndex).
	vmiIndexer cache.Indexer
	launchers  launcherpods.Pods
	// pvcs say whether the instance's claims exist, and whether they are shared
	// (ReadWriteMany): LiveMigratable.
	pvcs   corelisters.PersistentVolumeClaimLister
	synced []cache.InformerSynced

	queue        workqueue.TypedRateLimitingInterface[string]
	recorder     record.EventRecorder
	expectations *expectations.Expectations
	created      createdPods
	// written are the cached instances this controller's writes have since replaced.
	written *superseded.Versions
	config  PodConfig
	// quotas decide each pod's AutoLimits.
	quotas Quotas
	clock  clock.PassiveClock
}

// New wires the controller to its informers; launcher pods map to their instance.
func New(kube kubernetes.Interface, virt versioned.Interface, vmis informers.VirtualMachineInstanceInformer,
	pods coreinformers.PodInformer, pvcs coreinformers.PersistentVolumeClaimInformer, recorder record.EventRecorder, config PodConfig, quotas Quotas) (*Controller, error) {
	launchers, err := launcherpods.Index(pods.Informer())
	if err != nil {
		return nil, err
	}
	if err := indexClaims(vmis.Informer()); err != nil {
		return nil, err
	}
	c := &Controller{
		kube:         kube,
		virt:         virt,
		vmiLister:    vmis.Lister(),
		vmiIndexer:   vmis.Informer().GetIndexer(),
		launchers:    launchers,
		pvcs:         pvcs.Lister(),
		synced:       append([]cache.InformerSynced{vmis.Informer().HasSynced, pods.Informer().HasSynced, pvcs.Informer().HasSynced}, quotas.Synced...),
		queue:        workloop.NewQueue("virtualmachineinstance"),
		recorder:     recorder,
		expectations: expectations.New(),
		written:      superseded.New(),
		config:       config,
		quotas:       quotas,
		clock:        clock.RealClock{},
	}
	if _, err := vmis.Informer().AddEventHandler(workloop.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	if _, err := pvcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: c.enqueueClaimants, UpdateFunc: c.claimChanged}); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if key, _, ok := launcherpods.InstanceKey(obj); ok {
				c.expectations.CreationObserved(key)
				c.queue.Add(key)
			}
		},
		UpdateFunc: func(_, obj any) {
			if key, _, ok := launcherpods.InstanceKey(obj); ok {
				c.queue.Add(key)
			}
		},
		DeleteFunc: func(obj any) {
			if key, pod, ok := launcherpods.InstanceKey(obj); ok {
				c.expectations.DeletionObserved(key, pod.UID)
				c.queue.Add(key)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes instances with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error {
	loop := workloop.Loop{Name: ControllerName, Queue: c.queue, Synced: c.synced, Sync: c.sync}
	return loop.Run(ctx, workers)
}

// Package node is virt-controller's node controller: it takes a node out of instance
// scheduling when its virt-handler stops beating (handler/heartbeat.go), as KubeVirt's does.
//
// It never moves an instance off a node by itself. A node that stopped beating may only have
// lost its connection: its guests may still run, and a VM must never run twice. An instance
// leaves a node only when Kubernetes says its launcher pod is gone (removed from the API, or
// ended), and then the VMI controller fails it (PodDeleted, PodFailed) and its VM starts it
// again elsewhere. Kubernetes removes the pods of a node that is confirmed down when the
// node object is deleted, or when it is NotReady and tainted node.kubernetes.io/out-of-service
// (non-graceful node shutdown): docs/nodes.md.
package node

import (
	"context"
	"time"

	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/vmctl/vmctl/pkg/workloop"
)

// DefaultHeartbeatTimeout is how old a handler's last heartbeat may be before its node takes no
// new instances: four of virt-handler's default intervals, as long as the kubelet's default
// node-monitor grace period.
const DefaultHeartbeatTimeout = 40 * time.Second

// Controller withdraws kubevirt.io/schedulable from nodes whose handler is silent.
type Controller struct {
	kube       kubernetes.Interface
	nodeLister corelisters.NodeLister
	loop       *workloop.Loop
	queue      workqueue.TypedRateLimitingInterface[string]
	recorder   record.EventRecorder
	clock      clock.PassiveClock
	timeout    time.Duration
}

// New wires the controller to the node informer.
func New(kube kubernetes.Interface, nodes coreinformers.NodeInformer, recorder record.EventRecorder, timeout time.Duration) (*Controller, error) {
	c := &Controller{
		kube:       kube,
		nodeLister: nodes.Lister(),
		queue:      workloop.NewQueue("node"),
		recorder:   recorder,
		clock:      clock.RealClock{},
		timeout:    timeout,
	}
	c.loop = &workloop.Loop{Name: "node", Queue: c.queue, Synced: []cache.InformerSynced{nodes.Informer().HasSynced}, Sync: c.sync}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { workloop.Enqueue(c.queue, obj) },
		UpdateFunc: func(_, obj any) { workloop.Enqueue(c.queue, obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes nodes until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) error { return c.loop.Run(ctx, workers) }

package handler

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions/kubevirt/v1"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/podnet"
	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/superseded"
	"github.com/vmctl/vmctl/pkg/workloop"
)

// ControllerName is the loop's name in logs and metrics.
const ControllerName = "virt-handler"

// Waiting for a launcher's libvirtd is a requeue with its own backoff, not an error: libvirtd
// listens ~1-2 s after the pod runs, and no pod event says when.
const (
	socketWaitBase = 100 * time.Millisecond
	socketWaitMax  = 5 * time.Second
)

// Options configure the handler.
type Options struct {
	// NodeName is this node: only its instances and launcher pods are handled.
	NodeName string
	// KubeletRoot is the kubelet's root directory as the handler sees it (its pods/ below).
	KubeletRoot string
	// AllowEmulation lets guests whose launcher pod has no /dev/kvm (it requested no
	// devices.kubevirt.io/kvm) run under QEMU's emulator (TCG).
	AllowEmulation bool
	// Dial connects to a launcher's libvirtd; nil is DialLibvirt.
	Dial Dialer
	// PlumbNetwork makes the masquerade binding's links and NAT in the network namespace of
	// the launcher's libvirtd, process pid of pod podUID; nil is podnet.Setup.
	PlumbNetwork func(pid int, podUID types.UID, binding podnet.Binding) error
	// Capabilities seeds new launcher pods' libvirt (seedCapabilities); nil seeds nothing.
	Capabilities Capabilities
	// PodIP is this handler's pod IP, where it takes migrations to this node; MigrationCerts
	// the handlers' mutual TLS material between each other. Without them the node neither
	// sends nor receives migrations.
	PodIP          string
	MigrationCerts func(context.Context) (handlerapi.Material, error)
}

// Controller runs the domains of the instances scheduled to its node, one sync per instance.
type Controller struct {
	virt      versioned.Interface
	vmiLister listers.VirtualMachineInstanceLister
	// targetLister has the instances migrating to this node (MigrationTargetNodeField).
	targetLister listers.VirtualMachineInstanceLister
	launchers    launcherpods.Pods
	synced       []cache.InformerSynced

	queue    workqueue.TypedRateLimitingInterface[string]
	waits    workqueue.TypedRateLimiter[string]
	recorder record.EventRecorder
	conns    *connCache
	gate     *launcherGate
	freezes  freezes
	// written are the cached instances whose status this handler has since replaced.
	written  *superseded.Versions
	inbound  migrations[*inbound]
	outbound migrations[*outbound]
	loop     *workloop.Loop
	opts     Options
	clock    clock.PassiveClock
}

// New wires the controller to informers already restricted to its node (NewInformerFactories):
// instances (those on the node, and those migrating to it, when incoming is not nil) enqueue
// themselves, launcher pods their instance.
func New(virt versioned.Interface, vmis, incoming informers.VirtualMachineInstanceInformer, pods coreinformers.PodInformer,
	recorder record.EventRecorder, opts Options) (*Controller, error) {
	if opts.NodeName == "" {
		return nil, fmt.Errorf("no node name")
	}
	if opts.Dial == nil {
		opts.Dial = DialLibvirt
	}
	if opts.PlumbNetwork == nil {
		opts.PlumbNetwork = podnet.Setup
	}
	launchers, err := launcherpods.Index(pods.Informer())
	if err != nil {
		return nil, err
	}
	c := &Controller{
		virt:      virt,
		vmiLister: vmis.Lister(),
		launchers: launchers,
		synced:    []cache.InformerSynced{vmis.Informer().HasSynced, pods.Informer().HasSynced},
		queue:     workloop.NewQueue(ControllerName),
		waits:     workqueue.NewTypedItemExponentialFailureRateLimiter[string](socketWaitBase, socketWaitMax),
		recorder:  recorder,
		opts:      opts,
		clock:     clock.RealClock{},
	}
	c.conns = newConnCache(opts.Dial, c.queue.Add)
	c.gate = newLauncherGate(c.clock)
	c.written = superseded.New()
	c.loop = &workloop.Loop{Name: ControllerName, Queue: c.queue, Synced: c.synced, Sync: c.sync}
	if _, err := vmis.Informer().AddEventHandler(workloop.EnqueueHandler(c.queue)); err != nil {
		return nil, err
	}
	if incoming != nil {
		c.targetLister = incoming.Lister()
		c.synced = append(c.synced, incoming.Informer().HasSynced)
		if _, err := incoming.Informer().AddEventHandler(workloop.EnqueueHandler(c.queue)); err != nil {
			return nil, err
		}
	}
	enqueueOwner := func(obj any) {
		if key, _, ok := launcherpods.InstanceKey(obj); ok {
			c.queue.Add(key)
		}
	}
	if _, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueueOwner,
		UpdateFunc: func(_, obj any) { enqueueOwner(obj) },
		DeleteFunc: enqueueOwner,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes instances with workers goroutines until ctx ends, then closes every launcher
// connection. The domains keep running: they belong to their pods.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer c.conns.closeAll()
	return c.loop.Run(ctx, workers)
}

// wedgedAfter is well past the longest a sync can take, each of its libvirt calls and API
// writes being bounded (connect, state, define, start, XML: under two minutes together).
const wedgedAfter = 3 * time.Minute

// Live is the liveness check: nil unless a worker is stuck in one sync.
func (c *Controller) Live() error { return c.loop.Wedged(wedgedAfter) }

// Ready is the readiness check: nil once the informers' caches have synced.
func (c *Controller) Ready() error {
	for _, synced := range c.synced {
		if !synced() {
			return fmt.Errorf("caches not synced yet")
		}
	}
	return nil
}

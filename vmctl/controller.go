package vmctl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	"github.com/vmctl/vmctl/client/informers/externalversions"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/health"
)

// Reasons of the events vmctl records on its pod (`kubectl describe pod` shows them).
const (
	ReasonPrototypeUnavailable = "PrototypeUnavailable"
	ReasonInvalidPrototype     = "InvalidPrototype"
	ReasonInvalidVolumeMapping = "InvalidVolumeMapping"
	ReasonSharedVolume         = "SharedVolume"
	ReasonCloneCreated         = "CloneCreated"
	ReasonCloneAdopted         = "CloneAdopted"
	ReasonCloneFailed          = "CloneFailed"
	ReasonOwnedByAnotherPod    = "CloneOwnedByAnotherPod"
)

// Controller keeps one clone alive for one pod. It is the sample-controller shape reduced to a
// single key: an informer watching only the clone's name, a rate-limited queue (whose per-key
// backoff is the wait for a missing prototype) and one worker.
type Controller struct {
	virt           versioned.Interface
	pod            *corev1.Pod
	namespace      string
	protoNamespace string
	protoName      string
	cloneName      string
	// podVolumes binds prototype volumes to the pod's claims (--pod-volume).
	podVolumes map[string]string
	// allowShared clones prototypes with read-write claims every clone would share.
	allowShared bool

	factory  externalversions.SharedInformerFactory
	vmLister listers.VirtualMachineLister
	// vmiLister reads the clone's instance, for --forward only (nil without).
	vmiLister listers.VirtualMachineInstanceLister
	synced    []cache.InformerSynced
	queue     workqueue.TypedRateLimitingInterface[string]
	limiter   workqueue.TypedRateLimiter[string]
	recorder  record.EventRecorder

	// ready is the pod's readiness, passing only while the clone's VM reports Ready, so a
	// rollout, a PodDisruptionBudget or maxUnavailable count VMs, not vmctl processes. A held
	// /readyz?wait= probe wakes when it is set.
	ready *health.Flag
	// cloneUID is the clone this process created or adopted (read by teardown).
	mu       sync.Mutex
	cloneUID types.UID
	// lastEvent keeps a retrying worker from repeating the same event (worker only).
	lastEvent string
}

// NewController wires a controller for pod's clone of the prototype opts names (its
// namespaces already defaulted).
func NewController(virt versioned.Interface, pod *corev1.Pod, opts Options, recorder record.EventRecorder) (*Controller, error) {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, max(opts.PrototypeBackoffMax, time.Second))
	c := &Controller{
		virt: virt, pod: pod, namespace: opts.Namespace, protoNamespace: opts.ProtoNamespace, protoName: opts.Prototype,
		cloneName:   CloneName(opts.Prototype, pod.Name),
		podVolumes:  opts.PodVolumes,
		allowShared: opts.AllowSharedVolumes,
		recorder:    recorder,
		limiter:     limiter,
		// Unnamed: a named queue's metrics wake the process twice a second, and vmctl,
		// one pod per VM, is otherwise idle while its clone runs.
		queue: workqueue.NewTypedRateLimitingQueue(limiter),
	}
	c.ready = health.NewFlag(fmt.Errorf("VirtualMachine %s/%s is not Ready", c.namespace, c.cloneName))
	// Only the clone: vmctl never lists the namespace's other VMs, however many there are.
	c.factory = externalversions.NewSharedInformerFactoryWithOptions(virt, 0,
		externalversions.WithNamespace(opts.Namespace),
		externalversions.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", c.cloneName).String()
		}))
	vms := c.factory.Kubevirt().V1().VirtualMachines()
	c.vmLister, c.synced = vms.Lister(), []cache.InformerSynced{vms.Informer().HasSynced}
	enqueue := func(any) { c.queue.Add(c.key()) }
	if _, err := vms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// WatchInstance makes the controller cache its clone's instance, for GuestAddress. It is
// optional because it needs the right to watch virtualmachineinstances; call it before Run.
func (c *Controller) WatchInstance() {
	vmis := c.factory.Kubevirt().V1().VirtualMachineInstances()
	c.vmiLister = vmis.Lister()
	c.synced = append(c.synced, vmis.Informer().HasSynced)
}

// CloneName is the name of the VM this controller keeps.
func (c *Controller) CloneName() string { return c.cloneName }

func (c *Controller) key() string { return c.namespace + "/" + c.cloneName }

// Clone is the UID of the clone this process created or adopted, if any.
func (c *Controller) Clone() types.UID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cloneUID
}

// Run keeps the clone until ctx ends; it returns once the worker has stopped, so that teardown
// never races a worker re-creating the clone.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	if !cache.WaitForNamedCacheSync("vmctl", ctx.Done(), c.synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return errors.New("vmctl: the VM cache did not sync")
	}
	c.queue.Add(c.key())
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext(ctx) {
			}
		}, time.Second)
	}()
	<-ctx.Done()
	c.ready.Set(false)
	c.queue.ShutDown()
	<-done
	return nil
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx); err != nil {
		// The limiter's per-key exponential delay is the backoff; it is logged so a pod
		// waiting for its prototype says what it waits for and for how long.
		delay := c.limiter.When(key)
		klog.FromContext(ctx).Info("retrying", "clone", c.cloneName, "in", delay, "err", err.Error())
		c.queue.AddAfter(key, delay)
		return true
	}
	c.limiter.Forget(key)
	return true
}

// sync makes the world match: no clone -> create it from the prototype; our clone -> report
// its readiness; someone else's clone of that name -> leave it alone and stay unready.
func (c *Controller) sync(ctx context.Context) error {
	log := klog.FromContext(ctx).WithValues("clone", klog.KRef(c.namespace, c.cloneName))
	vm, err := c.vmLister.VirtualMachines(c.namespace).Get(c.cloneName)
	if apierrors.IsNotFound(err) {
		c.ready.Set(false)
		return c.create(ctx, log)
	}
	if err != nil {
		return err
	}
	if !OwnedBy(vm, c.pod) {
		c.ready.Set(false)
		c.event(corev1.EventTypeWarning, ReasonOwnedByAnotherPod, "VirtualMachine %s/%s exists and belongs to pod UID %q, not this pod; leaving it alone",
			vm.Namespace, vm.Name, vm.Annotations[PodUIDAnnotation])
		return nil
	}
	if vm.DeletionTimestamp != nil {
		// Deleted by someone else: its delete event brings us back to create a new one.
		c.ready.Set(false)
		log.Info("clone is being deleted; a new one follows once it is gone")
		return nil
	}
	// Steady state: whatever goes wrong next is news again.
	c.lastEvent = ""
	c.mu.Lock()
	adopted := c.cloneUID != vm.UID
	c.cloneUID = vm.UID
	c.mu.Unlock()
	if adopted {
		c.event(corev1.EventTypeNormal, ReasonCloneAdopted, "Adopted VirtualMachine %s/%s left by an earlier run of this pod", vm.Namespace, vm.Name)
	}
	if ready := vm.Status.Ready; ready != c.ready.Set(ready) {
		log.Info("clone readiness changed", "ready", ready, "status", vm.Status.PrintableStatus)
	}
	return nil
}

func (c *Controller) create(ctx context.Context, log klog.Logger) error {
	proto, err := c.virt.KubevirtV1().VirtualMachines(c.protoNamespace).Get(ctx, c.protoName, metav1.GetOptions{})
	if err != nil {
		msg := "waiting for prototype VirtualMachine %s/%s: %v"
		if apierrors.IsForbidden(err) {
			msg = "waiting for prototype VirtualMachine %s/%s: vmctl may not read it (grant get on virtualmachines in that namespace): %v"
		}
		c.event(corev1.EventTypeWarning, ReasonPrototypeUnavailable, msg, c.protoNamespace, c.protoName, err)
		return err
	}
	clone, err := Clone(proto, c.pod, c.namespace, c.podVolumes)
	if err != nil {
		reason := ReasonInvalidPrototype
		if errors.Is(err, ErrVolumeMapping) {
			reason = ReasonInvalidVolumeMapping
		}
		c.event(corev1.EventTypeWarning, reason, "cannot clone %s/%s: %v", c.protoNamespace, c.protoName, err)
		return err
	}
	if shared := strings.Join(SharedVolumes(proto, c.podVolumes), ", "); shared != "" {
		if !c.allowShared {
			c.event(corev1.EventTypeWarning, ReasonSharedVolume, "not cloning %s/%s: every clone would open its read-write PVC volumes at once, risking their data: %s. "+
				"Bind them to each pod's own claim (--pod-volume), mark them readOnly, or pass --allow-shared-volumes", c.protoNamespace, c.protoName, shared)
			return fmt.Errorf("prototype %s/%s has read-write volumes every clone would share: %s", c.protoNamespace, c.protoName, shared)
		}
		c.event(corev1.EventTypeWarning, ReasonSharedVolume, "prototype %s/%s has read-write PVC volumes every clone opens at once (--allow-shared-volumes): %s",
			c.protoNamespace, c.protoName, shared)
	}
	created, err := c.virt.KubevirtV1().VirtualMachines(c.namespace).Create(ctx, clone, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Our cache is behind; the informer's add event brings the existing one.
		return nil
	}
	if err != nil {
		c.event(corev1.EventTypeWarning, ReasonCloneFailed, "creating VirtualMachine %s/%s: %v", c.namespace, clone.Name, err)
		return err
	}
	c.mu.Lock()
	c.cloneUID = created.UID
	c.mu.Unlock()
	log.Info("created clone", "prototype", klog.KObj(proto), "prototypeGeneration", proto.Generation, "node", c.pod.Spec.NodeName)
	c.event(corev1.EventTypeNormal, ReasonCloneCreated, "Created VirtualMachine %s/%s from prototype %s/%s (generation %d) on node %s",
		c.namespace, created.Name, c.protoNamespace, c.protoName, proto.Generation, c.pod.Spec.NodeName)
	return nil
}

// event records an event on the pod and logs it, once per distinct message in a row: a
// prototype missing for an hour is one event, not one per retry.
func (c *Controller) event(eventType, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if reason+msg == c.lastEvent {
		return
	}
	c.lastEvent = reason + msg
	klog.InfoS(msg, "reason", reason, "pod", klog.KObj(c.pod))
	c.recorder.Event(c.pod, eventType, reason, msg)
}

// OwnedBy says whether vm is pod's clone: by the UID annotation, or the ownerReference when
// the annotation was lost.
func OwnedBy(vm *v1.VirtualMachine, pod *corev1.Pod) bool {
	if uid, ok := vm.Annotations[PodUIDAnnotation]; ok {
		return uid == string(pod.UID)
	}
	for _, ref := range vm.OwnerReferences {
		if ref.UID == pod.UID {
			return true
		}
	}
	return false
}

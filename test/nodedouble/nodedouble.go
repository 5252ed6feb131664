// Package nodedouble is a test double that plays the node side of the platform for integration
// tests and scale benchmarks, where there is no scheduler, no kubelet and no virt-handler: it
// binds launcher pods to its one (fake) node (unless their required anti-affinity excludes it), reports them Running, moves their instances from
// Scheduled to Running as virt-handler would, and lets a test power a guest off or crash it.
//
// It is a simulation for tests and benchmarks only. It runs no guest, checks no resources and
// must never be part of a product binary.
//
// It is shaped like a tiny controller: informers on launcher pods (label kubevirt.io=virt-launcher)
// and on the instances scheduled to its node (status.nodeName), one work queue, one sync per key. Several
// doubles may share a cluster: they race to bind each unbound pod and the losers' conflicts are
// ignored.
package nodedouble

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
	informers "github.com/vmctl/vmctl/client/informers/externalversions"
	listers "github.com/vmctl/vmctl/client/listers/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/vmistatus"
)

// UnschedulableLabel on a launcher pod makes DefaultUnschedulable refuse it; a non-empty value
// (label syntax, so no spaces) replaces the default message. Launcher pods carry their
// instance's labels, so a test sets it in a VirtualMachine's template.
const UnschedulableLabel = "nodedouble.vmctl.io/unschedulable"

// UnschedulableFunc decides whether a launcher pod fits nowhere. When it returns true the pod
// stays Pending and unbound with condition PodScheduled False, reason Unschedulable, and the
// message, as kube-scheduler reports it. It is asked on every event of an unbound pod.
type UnschedulableFunc func(pod *corev1.Pod) (message string, unschedulable bool)

// DefaultUnschedulable refuses the pods carrying UnschedulableLabel.
func DefaultUnschedulable(pod *corev1.Pod) (string, bool) {
	msg, ok := pod.Labels[UnschedulableLabel]
	if ok && msg == "" {
		msg = "0/1 nodes are available: pod marked unschedulable by the node double."
	}
	return msg, ok
}

// Reasons the double puts on instances it ends.
const (
	// ReasonGuestShutdown: Shutdown powered the guest off.
	ReasonGuestShutdown = "GuestShutdown"
	// ReasonGuestCrashed: Crash made the guest crash.
	ReasonGuestCrashed = "GuestCrashed"
)

type kind int

const (
	podKey kind = iota
	vmiKey
)

// key names one object the double syncs.
type key struct {
	kind            kind
	namespace, name string
}

// Double is one fake node: it runs every unbound launcher pod and the instances on it.
type Double struct {
	kube          kubernetes.Interface
	virt          versioned.Interface
	nodeName      string
	unschedulable UnschedulableFunc
	workers       int

	queue     workqueue.TypedRateLimitingInterface[key]
	podLister corelisters.PodLister
	vmiLister listers.VirtualMachineInstanceLister
}

// New is a double for the node nodeName. Configure it (WithUnschedulable, WithWorkers) before
// Run.
func New(kube kubernetes.Interface, virt versioned.Interface, nodeName string) *Double {
	return &Double{
		kube:          kube,
		virt:          virt,
		nodeName:      nodeName,
		unschedulable: DefaultUnschedulable,
		workers:       2,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[key](),
			workqueue.TypedRateLimitingQueueConfig[key]{Name: "nodedouble-" + nodeName}),
	}
}

// WithUnschedulable replaces DefaultUnschedulable; nil schedules every pod.
func (d *Double) WithUnschedulable(f UnschedulableFunc) *Double {
	if f == nil {
		f = func(*corev1.Pod) (string, bool) { return "", false }
	}
	d.unschedulable = f
	return d
}

// WithWorkers sets how many keys are synced at once (default 2); benchmarks raise it.
func (d *Double) WithWorkers(n int) *Double {
	if n > 0 {
		d.workers = n
	}
	return d
}

// NodeName is the node this double plays.
func (d *Double) NodeName() string { return d.nodeName }

// RegisterNode creates (or leaves alone) a Ready v1 Node of the double's name, labelled
// schedulable for instances, so that pods bound to it point at a real object.
func (d *Double) RegisterNode(ctx context.Context) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: d.nodeName, Labels: map[string]string{
		corev1.LabelHostname:   d.nodeName,
		v1.SchedulableLabel:    "true",
		"vmctl.io/node-double": "true",
	}}}
	created, err := d.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("10000"),
	}
	created.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "NodeDoubleReady",
			Message: "simulated by the node double", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: d.nodeName}},
	}
	_, err = d.kube.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// Run starts the double's informers, waits for them to sync and syncs pods and instances until
// ctx ends. Call it once per Double.
func (d *Double) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	defer d.queue.ShutDown()

	kubeFactory := kubeinformers.NewSharedInformerFactoryWithOptions(d.kube, 0,
		kubeinformers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{v1.AppLabel: v1.LauncherApp}.String()
		}))
	// Like virt-handler, the double sees only the instances scheduled to its node.
	virtFactory := informers.NewSharedInformerFactoryWithOptions(d.virt, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector(v1.NodeNameField, d.nodeName).String()
		}))
	pods := kubeFactory.Core().V1().Pods()
	vmis := virtFactory.Kubevirt().V1().VirtualMachineInstances()
	d.podLister, d.vmiLister = pods.Lister(), vmis.Lister()
	if _, err := pods.Informer().AddEventHandler(d.handler(podKey)); err != nil {
		return err
	}
	if _, err := vmis.Informer().AddEventHandler(d.handler(vmiKey)); err != nil {
		return err
	}
	kubeFactory.Start(ctx.Done())
	virtFactory.Start(ctx.Done())
	defer kubeFactory.Shutdown()
	defer virtFactory.Shutdown()
	if !cache.WaitForNamedCacheSync("nodedouble", ctx.Done(), pods.Informer().HasSynced, vmis.Informer().HasSynced) {
		if ctx.Err() != nil {
			return nil // stopped before the caches synced
		}
		return fmt.Errorf("node double %s: caches did not sync", d.nodeName)
	}
	for range d.workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for d.processNext(ctx) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (d *Double) handler(k kind) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		if m, err := metaOf(obj); err == nil {
			d.queue.Add(key{kind: k, namespace: m.GetNamespace(), name: m.GetName()})
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}
}

func metaOf(obj any) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T", obj)
	}
	return m, nil
}

func (d *Double) processNext(ctx context.Context) bool {
	k, quit := d.queue.Get()
	if quit {
		return false
	}
	defer d.queue.Done(k)
	var err error
	switch k.kind {
	case podKey:
		err = d.syncPod(ctx, k.namespace, k.name)
	case vmiKey:
		err = d.syncVMI(ctx, k.namespace, k.name)
	}
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "node double sync failed", "node", d.nodeName, "namespace", k.namespace, "name", k.name)
		d.queue.AddRateLimited(k)
		return true
	}
	d.queue.Forget(k)
	return true
}

// syncPod does what scheduler and kubelet would to one launcher pod: bind it, run it, and
// finish a deletion at once.
func (d *Double) syncPod(ctx context.Context, namespace, name string) error {
	cached, err := d.podLister.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	pods := d.kube.CoreV1().Pods(namespace)
	switch {
	case cached.DeletionTimestamp != nil:
		if cached.Spec.NodeName != "" && cached.Spec.NodeName != d.nodeName {
			return nil // another node's kubelet finishes it
		}
		// No kubelet will ever confirm the containers stopped: remove the pod now.
		err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0),
			Preconditions: &metav1.Preconditions{UID: ptr.To(cached.UID)}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // gone, or replaced by a pod of the same name
		}
		return err
	case cached.Spec.NodeName == "":
		if msg, no := d.unschedulable(cached); no {
			return d.markUnschedulable(ctx, cached, msg)
		}
		if d.repelled(cached) {
			return d.markUnschedulable(ctx, cached, antiAffinityMessage)
		}
		err := pods.Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: cached.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: d.nodeName},
		}, metav1.CreateOptions{})
		if apierrors.IsConflict(err) {
			return nil // bound meanwhile (by another double); its update event follows
		}
		return err // the binding's update event brings the pod back to run it
	case cached.Spec.NodeName != d.nodeName:
		return nil
	case cached.Status.Phase == "" || cached.Status.Phase == corev1.PodPending:
		pod := cached.DeepCopy()
		setRunning(pod)
		_, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	}
	return nil
}

// markUnschedulable reports the pod unschedulable as kube-scheduler does, once.
func (d *Double) markUnschedulable(ctx context.Context, cached *corev1.Pod, msg string) error {
	for _, c := range cached.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == msg {
			return nil
		}
	}
	pod := cached.DeepCopy()
	pod.Status.Phase = corev1.PodPending
	setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: msg})
	_, err := d.kube.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// setRunning is the status a kubelet reports once every container of the pod started.
func setRunning(pod *corev1.Pod) {
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.HostIP = "127.0.0.1"
	pod.Status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(&pod.Status, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue})
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
}

// setTerminated is the status a kubelet reports once every container exited with exitCode.
func setTerminated(pod *corev1.Pod, phase corev1.PodPhase, exitCode int32, reason string) {
	now := metav1.Now()
	pod.Status.Phase = phase
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(&pod.Status, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "PodCompleted"})
	}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Started: ptr.To(false),
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Reason: reason, FinishedAt: now}},
		})
	}
}

// setPodCondition replaces the condition of the same type, keeping its transition time when
// the status did not change.
func setPodCondition(s *corev1.PodStatus, cond corev1.PodCondition) {
	now := metav1.Now()
	cond.LastTransitionTime = now
	for i := range s.Conditions {
		if s.Conditions[i].Type == cond.Type {
			if s.Conditions[i].Status == cond.Status {
				cond.LastTransitionTime = s.Conditions[i].LastTransitionTime
			}
			s.Conditions[i] = cond
			return
		}
	}
	s.Conditions = append(s.Conditions, cond)
}

// syncVMI does what virt-handler would to an instance on the double's node: start the domain
// of a Scheduled instance, reporting it Running and Ready.
func (d *Double) syncVMI(ctx context.Context, namespace, name string) error {
	cached, err := d.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cached.Status.NodeName != d.nodeName || cached.Status.Phase != v1.Scheduled || cached.DeletionTimestamp != nil {
		return nil
	}
	vmi := cached.DeepCopy()
	now := metav1.Now()
	vmi.Status.SetPhase(v1.Running, "", now)
	vmi.Status.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, now)
	_, err = vmistatus.Write(ctx, d.virt.KubevirtV1().VirtualMachineInstances(namespace), vmi, false)
	return err
}

// Shutdown powers the guest of a running instance on the double's node off, as if it shut down
// from inside: the instance goes Succeeded, then its launcher pod exits 0 (Succeeded).
func (d *Double) Shutdown(ctx context.Context, namespace, name string) error {
	return d.end(ctx, namespace, name, v1.Succeeded, ReasonGuestShutdown, corev1.PodSucceeded, 0)
}

// Crash makes the guest of a running instance on the double's node crash: the instance goes
// Failed, then its launcher pod exits non-zero (Failed).
func (d *Double) Crash(ctx context.Context, namespace, name string) error {
	return d.end(ctx, namespace, name, v1.Failed, ReasonGuestCrashed, corev1.PodFailed, 1)
}

// end reports the instance's guest gone, then its launcher pod exited, reading both fresh
// from the API server and retrying on conflicts with the controllers' writes.
func (d *Double) end(ctx context.Context, namespace, name string, phase v1.VirtualMachineInstancePhase, reason string,
	podPhase corev1.PodPhase, exitCode int32) error {
	vmis := d.virt.KubevirtV1().VirtualMachineInstances(namespace)
	var ended *v1.VirtualMachineInstance
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vmi, err := vmis.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if vmi.Status.NodeName != d.nodeName {
			return fmt.Errorf("instance %s/%s is not on node %s (node %q)", namespace, name, d.nodeName, vmi.Status.NodeName)
		}
		if vmi.Status.Phase != v1.Running {
			return fmt.Errorf("instance %s/%s is %s, not Running", namespace, name, vmi.Status.Phase)
		}
		now := metav1.Now()
		vmi.Status.SetPhase(phase, reason, now)
		vmi.Status.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceReady,
			Status: corev1.ConditionFalse, Reason: reason}, now)
		ended, err = vmistatus.Write(ctx, vmis, vmi, false)
		return err
	})
	if err != nil {
		return err
	}
	pods, err := d.kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{v1.CreatedByLabel: string(ended.UID)}.String()})
	if err != nil {
		return err
	}
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName != d.nodeName || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			setTerminated(pod, podPhase, exitCode, reason)
			_, err := d.kube.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
			if apierrors.IsConflict(err) {
				fresh, getErr := d.kube.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
				if getErr != nil {
					return getErr
				}
				*pod = *fresh
			}
			return err
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("launcher pod %s: %w", pod.Name, err)
		}
	}
	return nil
}

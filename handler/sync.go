package handler

import (
	"context"
	"errors"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/vmistatus"
)

// sync brings one instance's domain in line with its phase and reports the domain back:
// a Scheduled instance gets its domain defined and started (unless it exists: a restarted
// handler adopts it), a Scheduled or Running one gets its status from the domain. Instances
// being deleted or ended are only let go of.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		if incoming, ok := c.incoming(key); ok {
			return c.syncTarget(ctx, key, incoming)
		}
		c.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	phase := cached.Status.Phase
	if cached.DeletionTimestamp != nil || phase.IsFinal() {
		c.forget(key)
		return nil
	}
	c.closeInbound(key, "") // the instance is this node's now, or was never coming here
	pod, err := c.launcherPod(cached)
	if err != nil {
		return err
	}
	if c.sending(cached) {
		return c.syncSource(ctx, key, cached, pod)
	}
	if c.movedAway(cached) {
		return nil // the guest runs on the target; the instance leaves this node at once
	}
	var keep types.UID
	if pod != nil {
		keep = pod.UID
	}
	c.conns.forget(key, keep)
	if pod == nil || (phase != v1.Scheduled && phase != v1.Running) {
		return nil
	}
	if pod.Status.Phase == corev1.PodPending {
		return nil // bound here, its containers starting: the pod's next update queues it
	}
	if pod.Status.Phase != corev1.PodRunning {
		// The launcher exited; its last events may still tell how the guest ended. Otherwise
		// the VMI controller ends the instance from the pod's phase.
		return c.reportLastStop(ctx, cached, pod)
	}
	if wait := c.gate.closed(key); wait > 0 {
		c.queue.AddAfter(key, wait)
		return nil
	}
	lv, err := c.conns.get(key, pod.UID, DomainName(cached), PrivateDir(c.opts.KubeletRoot, pod.UID))
	if isLauncherFault(err) {
		return c.reportLauncherFault(ctx, key, cached, err)
	}
	if errors.Is(err, ErrSocketNotReady) {
		if _, stopped := c.conns.lastStop(pod.UID); stopped {
			return c.reportLastStop(ctx, cached, pod)
		}
		klog.V(2).InfoS("waiting for the launcher's libvirt", "vmi", key, "reason", err)
		c.queue.AddAfter(key, c.waits.When(key))
		return nil
	}
	if err != nil {
		return err
	}
	c.waits.Forget(key)
	err = c.syncDomain(ctx, cached, pod, lv)
	if isLauncherFault(err) {
		return c.reportLauncherFault(ctx, key, cached, err)
	}
	if err == nil {
		c.gate.reset(key)
	}
	return err
}

// syncDomain creates or adopts the domain and reports it.
func (c *Controller) syncDomain(ctx context.Context, cached *v1.VirtualMachineInstance, pod *corev1.Pod, lv Libvirt) error {
	vmi := cached.DeepCopy()
	now := metav1.NewTime(c.clock.Now())
	name := DomainName(vmi)
	st, err := lv.DomainState(name)
	switch {
	case IsDomainNotFound(err) && vmi.Status.Phase == v1.Scheduled:
		st, err = c.createDomain(vmi, pod, lv)
	case IsDomainNotFound(err):
		setFailed(vmi, ReasonDomainLost, "the domain of the running instance is gone from its launcher's libvirt", now)
		return c.updateStatus(ctx, cached, vmi)
	case err == nil && vmi.Status.Phase == v1.Scheduled && neverRan(st):
		st, err = c.startDomain(vmi, lv, "")
	}
	if errors.Is(err, errNetworkNotReady) || errors.Is(err, errHooksNotReady) {
		klog.V(2).InfoS("waiting for the launcher", "vmi", klog.KObj(vmi), "reason", err)
		key := cache.MetaObjectToName(cached).String()
		c.queue.AddAfter(key, c.waits.When(key))
		return nil
	}
	if reason := missingSource(err); reason != "" {
		// The kubelet never fills an optional secret or configmap volume later, so this pod
		// cannot get the data: fail, and a VM's run strategy starts a new pod, which will.
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, reason, "Cannot run the instance: %v", err)
		setFailed(vmi, reason, err.Error(), now)
		return c.updateStatus(ctx, cached, vmi)
	}
	if isLauncherFault(err) {
		return err // before connectionLost: the handler itself closed the connection
	}
	if connectionLost(lv, err) {
		klog.V(2).InfoS("launcher libvirt went away", "vmi", klog.KObj(vmi), "err", err)
		return c.reportLastStop(ctx, cached, pod)
	}
	if isSpecError(err) {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonInvalidSpec, "Cannot run the instance: %v", err)
		setFailed(vmi, ReasonInvalidSpec, err.Error(), now)
		return c.updateStatus(ctx, cached, vmi)
	}
	if err != nil && vmi.Status.Phase == v1.Scheduled && c.startCannotSucceed(cache.MetaObjectToName(cached).String(), err) {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonStartFailed, "Cannot start the instance: %v", err)
		setFailed(vmi, ReasonStartFailed, err.Error(), now)
		return c.updateStatus(ctx, cached, vmi)
	}
	if err != nil {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonSyncFailed, "%v", err)
		setSyncFailed(vmi, err.Error(), now)
		if uerr := c.updateStatus(ctx, cached, vmi); uerr != nil {
			klog.ErrorS(uerr, "reporting a sync failure", "vmi", klog.KObj(vmi))
		}
		return err
	}
	o, known := outcomeOf(st, pod.DeletionTimestamp != nil)
	if !known {
		return nil
	}
	var dev *domainDevices
	if o.phase == v1.Running {
		if dev, err = c.devices(pod.UID, lv, name, vmi); err != nil {
			return err
		}
	}
	applyOutcome(vmi, o, pod, dev, now)
	vmi.Status.FSFreezeStatus = ""
	if o.phase == v1.Running {
		agent := c.conns.agentView(pod.UID)
		applyAgent(vmi, cached.Status.Interfaces, agent, now)
		vmi.Status.FSFreezeStatus = c.fsFreezeStatus(cached, pod.UID, agent)
	} else {
		c.freezes.drop(cache.MetaObjectToName(cached).String())
	}
	return c.updateStatus(ctx, cached, vmi)
}

// maxStartAttempts is how often a start that fails is tried before the instance fails: enough
// for a starved node to catch up, few enough that a guest QEMU cannot start (too little
// memory for its initrd, say) fails, and its VM's run strategy decides, within a minute.
const maxStartAttempts = 5

// startCannotSucceed says whether a failed start is final: libvirt refused the definition
// itself, or it failed maxStartAttempts times in a row.
func (c *Controller) startCannotSucceed(key string, err error) bool {
	for _, code := range []libvirt.ErrorNumber{libvirt.ErrXMLError, libvirt.ErrXMLDetail, libvirt.ErrConfigUnsupported, libvirt.ErrOperationUnsupported} {
		var lerr libvirt.Error
		if errors.As(err, &lerr) && lerr.Code == uint32(code) {
			return true
		}
	}
	return c.queue.NumRequeues(key) >= maxStartAttempts-1
}

// reportLauncherFault marks the instance not synchronized because its launcher hung or broke
// the protocol, drops the connection, and keeps the instance from the workers for a backoff.
// Other instances are not affected; the instance recovers on the first sync that succeeds.
func (c *Controller) reportLauncherFault(ctx context.Context, key string, cached *v1.VirtualMachineInstance, err error) error {
	c.conns.forget(key, "")
	wait := c.gate.trip(key)
	c.queue.AddAfter(key, wait)
	reason := ReasonLauncherUnresponsive
	if errors.Is(err, errLauncherProtocol) {
		reason = ReasonLauncherProtocolError
	}
	klog.InfoS("launcher fault", "vmi", key, "reason", reason, "err", err, "retryIn", wait)
	vmi := cached.DeepCopy()
	if cond := vmi.Status.Condition(v1.VirtualMachineInstanceSynchronized); cond == nil || cond.Reason != reason {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, reason, "%v", err)
	}
	vmi.Status.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse,
		Reason: reason, Message: err.Error()}, metav1.NewTime(c.clock.Now()))
	return c.updateStatus(ctx, cached, vmi)
}

// reportLastStop ends the instance as the last events of its domain said, if they said it.
func (c *Controller) reportLastStop(ctx context.Context, cached *v1.VirtualMachineInstance, pod *corev1.Pod) error {
	st, ok := c.conns.lastStop(pod.UID)
	if !ok {
		return nil
	}
	o, known := outcomeOf(st, pod.DeletionTimestamp != nil)
	if !known || o.phase == v1.Running {
		return nil
	}
	vmi := cached.DeepCopy()
	applyOutcome(vmi, o, pod, nil, metav1.NewTime(c.clock.Now()))
	return c.updateStatus(ctx, cached, vmi)
}

// updateStatus writes vmi's status when it differs from the cached instance's.
func (c *Controller) updateStatus(ctx context.Context, cached, vmi *v1.VirtualMachineInstance) error {
	if equality.Semantic.DeepEqual(cached.Status, vmi.Status) {
		return nil
	}
	key := cache.MetaObjectToName(cached).String()
	if c.written.Stale(key, cached.ResourceVersion) {
		// Computed from a copy this handler's last write replaced: the write would be refused,
		// and the watch event of that write syncs the instance again.
		return nil
	}
	_, err := vmistatus.Write(ctx, c.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace), vmi, false)
	if err == nil {
		c.written.Wrote(key, cached.ResourceVersion)
	}
	if err == nil && cached.Status.Phase != vmi.Status.Phase {
		klog.InfoS("instance phase", "vmi", klog.KObj(vmi), "phase", vmi.Status.Phase, "reason", vmi.Status.Reason)
	}
	return err
}

// forget drops what the handler holds for an instance it no longer follows.
func (c *Controller) forget(key string) {
	c.conns.forget(key, "")
	c.closeInbound(key, "")
	c.closeOutbound(key)
	c.written.Forget(key)
	c.waits.Forget(key)
	c.gate.reset(key)
	c.freezes.drop(key)
}

// launcherPod is the instance's launcher pod on this node from the node's pod cache: the one
// its status lists (launcherpods.Active), else the newest that ended (a pod leaves
// activePods once it ended; the handler may still report its last events); nil when there is
// none. A pod that only claims the instance is never run as its launcher while one is active.
func (c *Controller) launcherPod(vmi *v1.VirtualMachineInstance) (*corev1.Pod, error) {
	pods, err := c.launchers.Claiming(vmi)
	if err != nil {
		return nil, err
	}
	for _, pod := range launcherpods.Active(vmi, pods) {
		if pod.Spec.NodeName == c.opts.NodeName {
			return pod, nil
		}
	}
	for _, pod := range pods {
		ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		if pod.Spec.NodeName == c.opts.NodeName && ended {
			return pod, nil
		}
	}
	return nil, nil
}

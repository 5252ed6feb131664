package vmi

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
	"github.com/vmctl/vmctl/pkg/launcherpods"
	"github.com/vmctl/vmctl/pkg/vmistatus"
)

// Event reasons, as KubeVirt records them.
const (
	SuccessfulCreate = "SuccessfulCreate"
	FailedCreate     = "FailedCreate"
	SuccessfulDelete = "SuccessfulDelete"
)

// sync reconciles one instance with its launcher pod.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		c.created.forget(key)
		c.written.Forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	vmi := cached.DeepCopy()
	pods, err := c.launcherPods(key, vmi)
	if err != nil {
		return err
	}
	if vmi.DeletionTimestamp != nil {
		return c.finalize(ctx, key, vmi, pods)
	}
	if !vmi.Status.Phase.IsFinal() && !slices.Contains(vmi.Finalizers, v1.VirtualMachineInstanceFinalizer) {
		if vmi, err = c.updateMeta(ctx, vmi, func(m *metav1.ObjectMeta) {
			m.Finalizers = append(m.Finalizers, v1.VirtualMachineInstanceFinalizer)
		}); err != nil {
			return err
		}
		c.written.Wrote(key, cached.ResourceVersion)
	}

	podExpected := !c.expectations.Satisfied(key)
	var syncErr error
	missingClaim := ""
	if len(pods) == 0 && !podExpected && (vmi.Status.Phase == v1.VmPhaseUnset || vmi.Status.Phase == v1.Pending) {
		if missingClaim, err = c.missingClaim(vmi); err != nil {
			return err
		}
		stateComing := false
		if missingClaim == "" {
			stateComing, syncErr = c.ensureStateClaim(ctx, vmi)
		}
		if missingClaim == "" && !stateComing && syncErr == nil {
			syncErr = c.createPod(ctx, key, vmi)
		}
		if controller.NamespaceTerminating(syncErr) {
			return nil // the instance goes with its namespace
		}
		podExpected = syncErr == nil && missingClaim == "" && !stateComing
	}
	c.setClaimConditions(vmi, missingClaim)
	var pod *corev1.Pod
	if len(pods) > 0 {
		pod = pods[0]
	}
	phase, reason := nextPhase(vmi, pod, podExpected)
	if hold := c.schedulingHold(vmi, pod, phase); hold > 0 && syncErr == nil {
		// Most pods are bound to a node within moments: waiting a little lets one status
		// write say Scheduled instead of two saying Scheduling, then Scheduled.
		c.queue.AddAfter(key, hold)
		return nil
	}
	c.setStatus(vmi, phase, reason, pods)
	if !vmi.Status.Phase.IsFinal() && vmi.Status.Phase != v1.Pending {
		// Computed with the status writes the instance gets anyway, never a write of its own
		// but when it changes.
		vmi.Status.SetCondition(liveMigratable(vmi, c.pvcs), metav1.NewTime(c.clock.Now()))
	}
	if syncErr != nil {
		// Events scroll away; the instance itself says why it does not start.
		vmi.Status.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized,
			Status: corev1.ConditionFalse, Reason: FailedCreate, Message: syncErr.Error()}, metav1.NewTime(c.clock.Now()))
	} else if pod != nil {
		vmi.Status.RemoveCondition(v1.VirtualMachineInstanceSynchronized, FailedCreate)
	}
	// A status computed from a copy this controller's last write replaced would be refused;
	// the watch event of that write syncs the instance again. (A finalizer written by this
	// sync gave vmi the current version already.)
	stale := vmi.ResourceVersion == cached.ResourceVersion && c.written.Stale(key, cached.ResourceVersion)
	labelled := labelNode(vmi)
	if (labelled || !equality.Semantic.DeepEqual(cached.Status, vmi.Status)) && !stale {
		if _, err := vmistatus.Write(ctx, c.virt.KubevirtV1().VirtualMachineInstances(namespace), vmi, labelled); err != nil {
			return err
		}
		c.written.Wrote(key, cached.ResourceVersion)
	}
	return syncErr
}

// labelNode puts the instance's node in KubeVirt's kubevirt.io/nodeName label, so the status
// write that names the node writes the label too (the status is no subresource). It reports
// whether the label changed.
func labelNode(vmi *v1.VirtualMachineInstance) bool {
	node := vmi.Status.NodeName
	if node == "" || vmi.Labels[v1.NodeNameLabel] == node {
		return false
	}
	if vmi.Labels == nil {
		vmi.Labels = map[string]string{}
	}
	vmi.Labels[v1.NodeNameLabel] = node
	return true
}

// launcherPods are the instance's launcher pods, newest first: those its status lists
// (launcherpods.Active), and the one this controller created and has not recorded yet (after a
// restart, one that runs exactly what it renders). A pod that merely claims the instance (its
// label and owner reference, which anyone who may create pods in the namespace can set) is
// none of them.
func (c *Controller) launcherPods(key string, vmi *v1.VirtualMachineInstance) ([]*corev1.Pod, error) {
	claiming, err := c.launchers.Claiming(vmi)
	if err != nil {
		return nil, err
	}
	created := c.created.get(key)
	var want *corev1.Pod
	if created == "" && len(launcherpods.Active(vmi, claiming)) == 0 {
		// This controller restarted between creating a pod and recording it: a pod that runs
		// what it renders for the instance is the one it made, or as good as it.
		want = RenderLauncherPod(vmi, c.config)
	}
	var pods []*corev1.Pod // newest first, as claiming is
	for _, p := range claiming {
		migratedInto := migratedInto(vmi, p)
		if p.Labels[v1.MigrationJobLabel] != "" && !launcherpods.IsActive(vmi, p) && !migratedInto && vmi.DeletionTimestamp == nil {
			// A migration's target: the migration controller's until the instance moves in.
			// A deleted instance waits for it too, as it may hold the guest.
			continue
		}
		if launcherpods.IsActive(vmi, p) || migratedInto || p.UID == created || want != nil && sameContainers(p, want) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// migratedInto says whether pod is the target of the instance's last migration, which
// succeeded: the instance's launcher pod from then on.
func migratedInto(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) bool {
	s := vmi.Status.MigrationState
	return s != nil && s.Completed && !s.Failed && pod.Name == s.TargetPod && pod.Spec.NodeName == s.TargetNode &&
		pod.Labels[v1.MigrationJobLabel] == string(s.MigrationUID)
}

// sameContainers says whether two pods run the same containers: names, images, commands, args.
func sameContainers(a, b *corev1.Pod) bool {
	same := func(x, y []corev1.Container) bool {
		return slices.EqualFunc(x, y, func(c, d corev1.Container) bool {
			return c.Name == d.Name && c.Image == d.Image && slices.Equal(c.Command, d.Command) && slices.Equal(c.Args, d.Args)
		})
	}
	return same(a.Spec.InitContainers, b.Spec.InitContainers) && same(a.Spec.Containers, b.Spec.Containers)
}

// finalize deletes the launcher pods of a deleted instance (the launcher then shuts the guest
// down gracefully) and releases the instance once they are gone.
func (c *Controller) finalize(ctx context.Context, key string, vmi *v1.VirtualMachineInstance, pods []*corev1.Pod) error {
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil {
			continue
		}
		c.expectations.ExpectDeletions(key, pod.UID)
		err := c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}})
		if err != nil && !apierrors.IsNotFound(err) {
			c.expectations.DeletionObserved(key, pod.UID)
			return err
		}
		c.recorder.Eventf(vmi, corev1.EventTypeNormal, SuccessfulDelete, "Deleted virtual machine pod %s", pod.Name)
	}
	if len(pods) > 0 || !slices.Contains(vmi.Finalizers, v1.VirtualMachineInstanceFinalizer) {
		return nil
	}
	_, err := c.updateMeta(ctx, vmi, func(m *metav1.ObjectMeta) {
		m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == v1.VirtualMachineInstanceFinalizer })
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// updateMeta writes a metadata change (with the status as stored) and returns the stored
// instance with the status computed so far, so the later status write builds on the new
// resourceVersion.
func (c *Controller) updateMeta(ctx context.Context, vmi *v1.VirtualMachineInstance, change func(*metav1.ObjectMeta)) (*v1.VirtualMachineInstance, error) {
	status := vmi.Status
	change(&vmi.ObjectMeta)
	updated, err := c.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Update(ctx, vmi, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	updated.Status = status
	return updated, nil
}

// setStatus records the phase (with its transition time), the node, the launcher pods and the
// pod's scheduling condition.
func (c *Controller) setStatus(vmi *v1.VirtualMachineInstance, phase v1.VirtualMachineInstancePhase, reason string, pods []*corev1.Pod) {
	s := &vmi.Status
	now := metav1.NewTime(c.clock.Now())
	s.SetPhase(phase, reason, now)
	if len(pods) == 0 {
		return
	}
	pod := pods[0]
	if s.NodeName == "" && phase == v1.Scheduled {
		s.NodeName = pod.Spec.NodeName
	}
	if m := s.MigrationState; m != nil && m.Completed && !m.Failed && m.TargetNode != "" {
		s.NodeName = m.TargetNode // the guest moved: the target's handler follows it now
	}
	if s.EvacuationNodeName != "" && s.EvacuationNodeName != s.NodeName {
		s.EvacuationNodeName = "" // evacuated
	}
	active := map[types.UID]string{}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			active[p.UID] = p.Spec.NodeName
		}
	}
	s.ActivePods = active
	if len(active) == 0 {
		s.ActivePods = nil
	}
	setGuestResources(vmi, pod)
	c.setVolumeStatus(vmi)
	for _, pc := range pod.Status.Conditions {
		if pc.Type == corev1.PodScheduled {
			setPodScheduled(s, pc, now)
		}
	}
	if !phase.IsFinal() {
		setImagePullCondition(s, pod, phase, now)
	}
	if reason == ReasonPodFailed {
		setLauncherFailure(s, pod, now)
	}
}

// setLauncherFailure says on the instance why its launcher failed, with the launcher's
// termination message (e.g. virt-handler never set up the pod network), so users need not
// find the ended pod's log.
func setLauncherFailure(s *v1.VirtualMachineInstanceStatus, pod *corev1.Pod, now metav1.Time) {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; cs.Name == launcherContainer && t != nil && t.Message != "" {
			s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse,
				Reason: ReasonPodFailed, Message: "virt-launcher: " + strings.TrimSpace(t.Message)}, now)
		}
	}
}

// setPodScheduled mirrors the pod's PodScheduled condition while the pod waits for a node (so
// users see why, e.g. Unschedulable) and drops it once the pod is scheduled: the normal path
// then costs no extra status write.
func setPodScheduled(s *v1.VirtualMachineInstanceStatus, pc corev1.PodCondition, now metav1.Time) {
	if pc.Status == corev1.ConditionTrue {
		s.RemoveCondition(v1.VirtualMachineInstancePodScheduled, "")
		return
	}
	s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstancePodScheduled, Status: pc.Status, Reason: pc.Reason, Message: pc.Message}, now)
}

// SchedulingHold is how long a new instance whose launcher pod is not yet bound keeps its
// first phase before it is reported as Scheduling.
const SchedulingHold = 2 * time.Second

// schedulingHold is how much longer to wait before writing Scheduling for an instance that has
// not reported any phase past Pending, counted from its launcher pod's creation (now, when the
// pod was just created and is not in the cache yet). Zero means write now.
func (c *Controller) schedulingHold(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, phase v1.VirtualMachineInstancePhase) time.Duration {
	if phase != v1.Scheduling || (vmi.Status.Phase != v1.VmPhaseUnset && vmi.Status.Phase != v1.Pending) {
		return 0
	}
	age := time.Duration(0)
	if pod != nil {
		age = c.clock.Since(pod.CreationTimestamp.Time)
	}
	return max(SchedulingHold-age, 0)
}

// setGuestResources reports, as KubeVirt does, what the guest got: its launcher pod's QoS
// class, the user QEMU runs as, its CPU topology and its memory (no hotplug here: at boot, now and requested are
// the same). Set with the first status write that has a pod, so they cost no write of their
// own.
func setGuestResources(vmi *v1.VirtualMachineInstance, pod *corev1.Pod) {
	s := &vmi.Status
	if q := pod.Status.QOSClass; q != "" {
		s.QOSClass = &q
	}
	topology := vmi.Spec.Domain.Topology()
	s.CurrentCPUTopology = &topology
	if sc := pod.Spec.SecurityContext; sc != nil && sc.RunAsUser != nil {
		s.RuntimeUser = uint64(*sc.RunAsUser)
	}
	if m := guestMemory(vmi); !m.IsZero() {
		s.Memory = &v1.MemoryStatus{GuestAtBoot: ptr.To(m.DeepCopy()), GuestCurrent: ptr.To(m.DeepCopy()), GuestRequested: ptr.To(m.DeepCopy())}
	}
}

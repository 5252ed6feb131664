package migration

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/api/migrations/v1alpha1"
	"github.com/vmctl/vmctl/controller"
	"github.com/vmctl/vmctl/pkg/vmistatus"
)

// Event reasons, as KubeVirt records them.
const (
	SuccessfulCreate    = "SuccessfulCreate"
	FailedCreate        = "FailedCreate"
	FailedMigration     = "FailedMigration"
	SuccessfulMigration = "SuccessfulMigration"
)

// sync moves one migration a step on: from what the cache shows of it, its instance and its
// target pod, it writes at most the target pod, the instance's migration state and its own
// status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.migrations.VirtualMachineInstanceMigrations(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		c.inFlight.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	m := cached.DeepCopy()
	vmiKey := namespace + "/" + m.Spec.VMIName
	vmi, err := c.vmiLister.VirtualMachineInstances(namespace).Get(m.Spec.VMIName)
	switch {
	case apierrors.IsNotFound(err):
		vmi = nil
		c.written.Forget(vmiKey)
	case err != nil:
		return err
	case c.written.Stale(vmiKey, vmi.ResourceVersion):
		return nil // the watch event of the controller's own write queues this again
	}
	targets, err := c.targetPods(m, vmi)
	if err != nil {
		return err
	}
	if m.DeletionTimestamp != nil || m.Status.Phase.IsFinal() {
		return c.finish(ctx, m, vmi, targets)
	}
	if !slices.Contains(m.Finalizers, v1.MigrationFinalizer) {
		// The finalizer lets a cancel (delete) clean up the target; the label lets users
		// (and virtctl migrate-cancel) find an instance's migrations.
		m.Finalizers = append(m.Finalizers, v1.MigrationFinalizer)
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[v1.MigrationSelectorLabel] = m.Spec.VMIName
		if m, err = c.virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			return err
		}
		cached = m.DeepCopy()
	}

	now := metav1.NewTime(c.clock.Now())
	var target *corev1.Pod
	if len(targets) > 0 {
		target = targets[0]
	}
	if m.Status.Phase == v1.MigrationPhaseUnset {
		setPhase(&m.Status, v1.MigrationPending, now) // recorded even when it starts at once
	}
	phase, failure := decide(m, vmi, target, c.expectations.CreationsPending(key), now.Time, c.opts.TargetTimeout)
	var stepErr error
	switch {
	case phase == v1.MigrationScheduling && m.Status.Phase == v1.MigrationPending && target != nil:
		// Started by an earlier sync whose status write the cache does not show (or which
		// failed): record it again; a stale copy's write is refused and retried.
		c.recordStart(key, m, vmi, target.Name)
	case phase == v1.MigrationPending && c.mayStart(m, vmi):
		if stepErr = c.createTarget(ctx, key, m, vmi); stepErr == nil {
			phase = v1.MigrationScheduling
		}
	case phase == v1.MigrationPreparingTarget && m.Status.Phase == v1.MigrationScheduled && ours(m, vmi) == nil:
		// Hand the instance over to the handlers: the source's and the target's read where
		// the domain goes from its migrationState. (Once it names this migration, the cache
		// is only behind on the migration's phase, and writing the state again would erase
		// what the handlers added.)
		if stepErr = c.handOver(ctx, m, vmi, target, now); stepErr != nil {
			phase = m.Status.Phase
		}
	case phase == v1.MigrationFailed && copying(ours(m, vmi)) && alive(vmi):
		// Memory is being copied: the source's handler aborts the copy and reports its end,
		// which fails the migration (or, had it just completed, succeeds it).
		if !ours(m, vmi).AbortRequested {
			c.recorder.Eventf(m, corev1.EventTypeWarning, FailedMigration, "Aborting the migration of %s: %s", m.Spec.VMIName, failure)
		}
		stepErr = c.requestAbort(ctx, vmi, ours(m, vmi))
		phase, failure = m.Status.Phase, ""
	case phase == v1.MigrationFailed:
		c.recorder.Eventf(m, corev1.EventTypeWarning, FailedMigration, "Migration of %s failed: %s", m.Spec.VMIName, failure)
	case phase == v1.MigrationSucceeded:
		c.recorder.Eventf(m, corev1.EventTypeNormal, SuccessfulMigration, "%s migrated to node %s", m.Spec.VMIName, vmi.Status.NodeName)
	}
	setPhase(&m.Status, phase, now)
	if order[phase] >= order[v1.MigrationScheduling] && order[phase] < order[v1.MigrationTargetReady] {
		// Nothing else may happen before the target's time is up: look again then.
		c.queue.AddAfter(key, transitionTime(m, v1.MigrationScheduling).Add(c.opts.TargetTimeout).Sub(now.Time)+time.Second)
	}
	mirrorState(m, vmi, failure)
	if !equality.Semantic.DeepEqual(cached.Status, m.Status) {
		if _, err := c.virt.KubevirtV1().VirtualMachineInstanceMigrations(namespace).UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return stepErr
}

// mayStart says whether a pending migration may start now: its instance has no other
// migration in flight, no older one waits for it, and the limits leave a slot.
func (c *Controller) mayStart(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) bool {
	if vmi.Status.Phase != v1.Running {
		return false // it may still start; one that ends fails the migration
	}
	if s := vmi.Status.MigrationState; s != nil && s.MigrationUID != m.UID && (!s.Completed || !s.Failed && s.TargetNode != vmi.Status.NodeName) {
		return false // another is in flight, or has moved the instance and its node is not recorded yet
	}
	for _, o := range Of(c.byVMI, m.Namespace+"/"+m.Spec.VMIName) {
		if o.UID == m.UID || o.Status.Phase.IsFinal() || o.DeletionTimestamp != nil {
			continue
		}
		if busy(o) || o.CreationTimestamp.Before(&m.CreationTimestamp) ||
			(o.CreationTimestamp.Equal(&m.CreationTimestamp) && o.Name < m.Name) {
			return false
		}
	}
	all, err := c.migrations.List(everything)
	if err != nil {
		return false
	}
	cluster, fromNode := c.inFlight.count(all, vmi.Status.NodeName)
	return cluster < c.opts.ParallelMigrationsPerCluster && fromNode < c.opts.ParallelOutboundMigrationsPerNode
}

// createTarget creates the target launcher pod and records the migration's source and target.
func (c *Controller) createTarget(ctx context.Context, key string, m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) error {
	c.expectations.ExpectCreations(key, 1)
	cfg := c.opts.Pod
	cfg.AutoLimits = c.quotas.AutoLimits(vmi.Namespace)
	pod, err := c.kube.CoreV1().Pods(vmi.Namespace).Create(ctx, RenderTargetPod(vmi, m, cfg), metav1.CreateOptions{})
	if err != nil {
		c.expectations.CreationObserved(key)
		if !controller.NamespaceTerminating(err) {
			c.recorder.Eventf(m, corev1.EventTypeWarning, FailedCreate, "Error creating migration target pod: %v", err)
		}
		return err
	}
	c.recorder.Eventf(m, corev1.EventTypeNormal, SuccessfulCreate, "Created migration target pod %s", pod.Name)
	c.recordStart(key, m, vmi, pod.Name)
	return nil
}

// recordStart counts a started migration against the limits and records its source and target.
func (c *Controller) recordStart(key string, m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, targetPod string) {
	c.inFlight.start(key, vmi.Status.NodeName)
	source, _ := c.sourcePod(vmi)
	m.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{
		MigrationUID: m.UID, SourceNode: vmi.Status.NodeName, SourcePod: source, TargetPod: targetPod,
	}
}

// sourcePod is the name of the instance's launcher pod on its node.
func (c *Controller) sourcePod(vmi *v1.VirtualMachineInstance) (string, error) {
	pods, err := c.launchers.Claiming(vmi)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if node, ok := vmi.Status.ActivePods[p.UID]; ok && node == vmi.Status.NodeName && p.Spec.NodeName == node {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("no active launcher pod on %s", vmi.Status.NodeName)
}

// handOver writes the instance's migrationState: the target's handler prepares the target pod
// for it, the source's sends the domain once the target is ready.
func (c *Controller) handOver(ctx context.Context, m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, target *corev1.Pod, now metav1.Time) error {
	state := m.Status.MigrationState.DeepCopy()
	if state == nil {
		state = &v1.VirtualMachineInstanceMigrationState{MigrationUID: m.UID, SourceNode: vmi.Status.NodeName}
	}
	state.TargetNode, state.TargetPod, state.Mode = target.Spec.NodeName, target.Name, v1.MigrationPreCopy
	policy, err := c.policyFor(vmi)
	if err != nil {
		return err
	}
	state.MigrationPolicyName = nil
	if policy != nil {
		state.MigrationPolicyName = ptr.To(policy.Name)
	}
	state.MigrationConfiguration = configure(c.opts.Defaults, policy)
	updated := vmi.DeepCopy()
	updated.Status.MigrationState = state
	updated.Status.MigrationMethod = Method(vmi)
	updated.Status.MigrationTransport = v1.MigrationTransportUnix
	return c.writeInstanceStatus(ctx, updated)
}

// writeInstanceStatus writes the status of an instance changed from its cached copy, and
// remembers that the copy is stale.
func (c *Controller) writeInstanceStatus(ctx context.Context, vmi *v1.VirtualMachineInstance) error {
	if _, err := vmistatus.Write(ctx, c.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace), vmi, false); err != nil {
		return err
	}
	c.written.Wrote(vmi.Namespace+"/"+vmi.Name, vmi.ResourceVersion)
	return nil
}

// policyFor is the MigrationPolicy matching the instance and its namespace, if any.
func (c *Controller) policyFor(vmi *v1.VirtualMachineInstance) (*v1alpha1.MigrationPolicy, error) {
	policies, err := c.policies.List(labels.Everything())
	if err != nil || len(policies) == 0 {
		return nil, err
	}
	var namespaceLabels map[string]string
	if ns, err := c.namespaces.Get(vmi.Namespace); err == nil {
		namespaceLabels = ns.Labels
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	return matchPolicy(policies, vmi.Labels, namespaceLabels), nil
}

// targetPods are the target launcher pods of a migration, newest first.
func (c *Controller) targetPods(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) ([]*corev1.Pod, error) {
	if vmi == nil {
		return nil, nil // the garbage collector deletes the pods with their instance
	}
	pods, err := c.launchers.Claiming(vmi)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pods, func(p *corev1.Pod) bool { return p.Labels[v1.MigrationJobLabel] != string(m.UID) }), nil
}

// ours is the instance's migration state when it is this migration's.
func ours(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstanceMigrationState {
	if vmi == nil || vmi.Status.MigrationState == nil || vmi.Status.MigrationState.MigrationUID != m.UID {
		return nil
	}
	return vmi.Status.MigrationState
}

// mirrorState keeps the migration's copy of the instance's migration state, with the failure.
func mirrorState(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, failure string) {
	if s := ours(m, vmi); s != nil {
		m.Status.MigrationState = s.DeepCopy()
	}
	if failure != "" {
		if m.Status.MigrationState == nil {
			m.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: m.UID}
		}
		s := m.Status.MigrationState
		s.Completed, s.Failed = true, true
		s.FailureReason = failure
	}
}

// Method is how the instance's disks move: with the memory, unless every disk is shared (a
// hostDisk is: one that is not makes the instance not migratable at all).
func Method(vmi *v1.VirtualMachineInstance) v1.VirtualMachineInstanceMigrationMethod {
	for _, vol := range vmi.Spec.Volumes {
		if vol.ContainerDisk != nil || vol.EmptyDisk != nil || vol.Ephemeral != nil {
			return v1.BlockMigration
		}
	}
	return v1.LiveMigration
}

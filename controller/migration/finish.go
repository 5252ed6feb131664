package migration

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// canceled is the failure reason of a migration deleted before it ended.
const canceled = "canceled: the migration was deleted"

// finish ends a migration that is over, or deleted (cancelled): unless it succeeded, the
// instance's migration state says it failed and its target pod is deleted; then the finalizer
// goes. A cancel while memory is being copied asks the source's handler to abort and waits for
// its report, so the domain never ends up running on both nodes.
func (c *Controller) finish(ctx context.Context, m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, targets []*corev1.Pod) error {
	deleted := m.DeletionTimestamp != nil
	if m.Status.Phase == v1.MigrationSucceeded && m.Status.MigrationState != nil {
		// The instance lives in the target named in the state; any other is a spare.
		targets = slices.DeleteFunc(targets, func(p *corev1.Pod) bool { return p.Name == m.Status.MigrationState.TargetPod })
		if err := c.deleteTargets(ctx, targets); err != nil {
			return err
		}
	}
	if m.Status.Phase != v1.MigrationSucceeded {
		if state := ours(m, vmi); state != nil && !state.Completed {
			if deleted && m.Status.Phase == v1.MigrationRunning {
				return c.requestAbort(ctx, vmi, state)
			}
			if err := c.endState(ctx, m, vmi, deleted); err != nil {
				return err
			}
		}
		if err := c.deleteTargets(ctx, targets); err != nil {
			return err
		}
	}
	if !slices.Contains(m.Finalizers, v1.MigrationFinalizer) {
		return nil
	}
	m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == v1.MigrationFinalizer })
	_, err := c.virt.KubevirtV1().VirtualMachineInstanceMigrations(m.Namespace).Update(ctx, m, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// deleteTargets deletes target pods (those of this migration only: the caller picked them).
func (c *Controller) deleteTargets(ctx context.Context, targets []*corev1.Pod) error {
	for _, pod := range targets {
		if pod.DeletionTimestamp != nil {
			continue
		}
		err := c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(pod.UID)}})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// endState marks the instance's migration state of a migration that ends before any memory
// moved: completed and failed, with the reason.
func (c *Controller) endState(ctx context.Context, m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, deleted bool) error {
	updated := vmi.DeepCopy()
	s := updated.Status.MigrationState
	s.Completed, s.Failed = true, true
	s.EndTimestamp = ptr.To(metav1.NewTime(c.clock.Now()))
	s.FailureReason = canceled
	if !deleted && m.Status.MigrationState != nil {
		s.FailureReason = m.Status.MigrationState.FailureReason
	}
	if deleted {
		s.AbortRequested, s.AbortStatus = true, v1.MigrationAbortSucceeded
	}
	_, err := c.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

// requestAbort asks the source's handler to abort the copy; it reports the end in the state.
func (c *Controller) requestAbort(ctx context.Context, vmi *v1.VirtualMachineInstance, state *v1.VirtualMachineInstanceMigrationState) error {
	if state.AbortRequested {
		return nil
	}
	updated := vmi.DeepCopy()
	updated.Status.MigrationState.AbortRequested = true
	updated.Status.MigrationState.AbortStatus = v1.MigrationAbortInProgress
	_, err := c.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	return err
}

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

// ending is what finishing a migration takes first.
type ending int

const (
	cleanUp      ending = iota // delete the spare target pods, drop the finalizer
	endFirst                   // also write the instance's state: failed before any memory moved
	abortAndWait               // ask the source's handler to abort the copy; its report ends it
)

// plan says how to end a migration that is over or deleted, from the instance's state (not
// the migration's phase, which the cache may show behind the handlers), and which target pod
// the instance now lives in ("" when none). A copy in flight is aborted by the source's
// handler and waited for, so the domain never ends up running on both nodes; one that
// completed keeps its target, even when the migration was deleted meanwhile.
func plan(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance) (ending, string) {
	state := ours(m, vmi)
	switch {
	case state != nil && state.Completed && !state.Failed:
		return cleanUp, state.TargetPod
	case m.Status.Phase == v1.MigrationSucceeded && m.Status.MigrationState != nil:
		return cleanUp, m.Status.MigrationState.TargetPod // the instance has moved on since
	case state == nil || state.Completed:
		return cleanUp, ""
	case copying(state) && alive(vmi):
		return abortAndWait, ""
	default:
		// Nothing is copied yet as far as the cache shows; the write of the state conflicts
		// with a start the cache does not show yet, and is retried.
		return endFirst, ""
	}
}

// copying says whether the source's handler has started copying memory and not reported the end.
func copying(state *v1.VirtualMachineInstanceMigrationState) bool {
	return state != nil && state.StartTimestamp != nil && !state.Completed
}

// alive says whether an instance may still run its guest.
func alive(vmi *v1.VirtualMachineInstance) bool {
	return vmi != nil && vmi.DeletionTimestamp == nil && !vmi.Status.Phase.IsFinal()
}

// finish ends a migration that is over, or deleted (cancelled), as plan says; then the
// finalizer goes.
func (c *Controller) finish(ctx context.Context, m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, targets []*corev1.Pod) error {
	how, keep := plan(m, vmi)
	switch how {
	case abortAndWait:
		return c.requestAbort(ctx, vmi, ours(m, vmi))
	case endFirst:
		if err := c.endState(ctx, m, vmi, m.DeletionTimestamp != nil); err != nil {
			return err
		}
	}
	targets = slices.DeleteFunc(targets, func(p *corev1.Pod) bool { return p.Name == keep })
	if err := c.deleteTargets(ctx, targets); err != nil {
		return err
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
	return c.writeInstanceStatus(ctx, updated)
}

// requestAbort asks the source's handler to abort the copy; it reports the end in the state.
func (c *Controller) requestAbort(ctx context.Context, vmi *v1.VirtualMachineInstance, state *v1.VirtualMachineInstanceMigrationState) error {
	if state.AbortRequested {
		return nil
	}
	updated := vmi.DeepCopy()
	updated.Status.MigrationState.AbortRequested = true
	updated.Status.MigrationState.AbortStatus = v1.MigrationAbortInProgress
	return c.writeInstanceStatus(ctx, updated)
}

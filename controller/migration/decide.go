package migration

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// order ranks the phases a migration goes through.
var order = map[v1.VirtualMachineInstanceMigrationPhase]int{
	v1.MigrationPhaseUnset: 0, v1.MigrationPending: 0, v1.MigrationScheduling: 1, v1.MigrationScheduled: 2,
	v1.MigrationPreparingTarget: 3, v1.MigrationTargetReady: 4, v1.MigrationRunning: 5,
}

// decide is the migration's next phase from its instance, its target pod (nil: none, and
// none expected unless creating) and what the handlers reported in the instance's
// migrationState; for Failed, the reason. Pending means: start when a slot is free.
func decide(m *v1.VirtualMachineInstanceMigration, vmi *v1.VirtualMachineInstance, target *corev1.Pod, creating bool,
	now time.Time, targetTimeout time.Duration) (v1.VirtualMachineInstanceMigrationPhase, string) {
	phase := m.Status.Phase
	fail := func(format string, args ...any) (v1.VirtualMachineInstanceMigrationPhase, string) {
		return v1.MigrationFailed, fmt.Sprintf(format, args...)
	}
	switch {
	case vmi == nil:
		return fail("the instance %s does not exist", m.Spec.VMIName)
	case vmi.DeletionTimestamp != nil:
		return fail("the instance is being deleted")
	case vmi.Status.Phase.IsFinal():
		return fail("the instance has ended (%s)", vmi.Status.Phase)
	case order[phase] == 0 && target == nil && !creating && notMigratable(vmi) != nil:
		c := notMigratable(vmi)
		return fail("the instance cannot live-migrate: %s: %s", c.Reason, c.Message)
	case order[phase] == 0 && (target != nil || creating):
		return v1.MigrationScheduling, "" // the cache has not caught up with this controller's start
	case order[phase] == 0:
		return v1.MigrationPending, ""
	}
	state := ours(m, vmi)
	if order[phase] >= order[v1.MigrationPreparingTarget] && state == nil {
		return fail("the instance no longer names this migration in status.migrationState")
	}
	if state != nil && state.Completed {
		switch {
		case state.Failed:
			return fail("%s", state.FailureReason)
		case state.TargetNode != "" && vmi.Status.NodeName != state.TargetNode:
			// Succeeded once the instance says where it runs now: a user (or a drain) who
			// waited for the migration then reads the target node, never the source.
			return phase, ""
		}
		return v1.MigrationSucceeded, ""
	}
	switch {
	case target == nil && !creating:
		return fail("the target pod is gone")
	case target == nil:
		return phase, ""
	case target.DeletionTimestamp != nil:
		return fail("the target pod %s is being deleted", target.Name)
	case target.Status.Phase == corev1.PodFailed || target.Status.Phase == corev1.PodSucceeded:
		return fail("the target pod %s ended (%s) %s", target.Name, target.Status.Phase, target.Status.Message)
	}
	if order[phase] < order[v1.MigrationTargetReady] {
		if since := now.Sub(transitionTime(m, v1.MigrationScheduling)); since > targetTimeout {
			return fail("the target was not ready within %s: %s", targetTimeout, podWaiting(target))
		}
	}
	switch phase {
	case v1.MigrationScheduling:
		if target.Spec.NodeName != "" && target.Status.Phase == corev1.PodRunning {
			return v1.MigrationScheduled, ""
		}
	case v1.MigrationScheduled:
		return v1.MigrationPreparingTarget, ""
	case v1.MigrationPreparingTarget:
		if state.TargetNodeAddress != "" {
			return v1.MigrationTargetReady, ""
		}
	case v1.MigrationTargetReady:
		if state.StartTimestamp != nil {
			return v1.MigrationRunning, ""
		}
	}
	return phase, ""
}

// notMigratable is the instance's LiveMigratable condition when it is False.
func notMigratable(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstanceCondition {
	if c := vmi.Status.Condition(v1.VirtualMachineInstanceIsMigratable); c != nil && c.Status == corev1.ConditionFalse {
		return c
	}
	return nil
}

// podWaiting says what a target pod waits for.
func podWaiting(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("pod %s is not scheduled: %s %s", pod.Name, c.Reason, c.Message)
		}
	}
	if pod.Spec.NodeName == "" {
		return fmt.Sprintf("pod %s is not scheduled", pod.Name)
	}
	if pod.Status.Phase != corev1.PodRunning {
		return fmt.Sprintf("pod %s on node %s is %s", pod.Name, pod.Spec.NodeName, pod.Status.Phase)
	}
	return fmt.Sprintf("the handler of node %s did not prepare pod %s", pod.Spec.NodeName, pod.Name)
}

// transitionTime is when the migration reached a phase (zero: never).
func transitionTime(m *v1.VirtualMachineInstanceMigration, phase v1.VirtualMachineInstanceMigrationPhase) time.Time {
	for _, t := range m.Status.PhaseTransitionTimestamps {
		if t.Phase == phase {
			return t.PhaseTransitionTimestamp.Time
		}
	}
	return time.Time{}
}

// setPhase records a new phase with its transition time.
func setPhase(s *v1.VirtualMachineInstanceMigrationStatus, phase v1.VirtualMachineInstanceMigrationPhase, now metav1.Time) {
	if s.Phase == phase {
		return
	}
	s.Phase = phase
	s.PhaseTransitionTimestamps = append(s.PhaseTransitionTimestamps,
		v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: now})
}

package replicaset

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// updateStatusFields computes the replica set's status from its active instances and the
// outcome of this sync.
func (c *Controller) updateStatusFields(rs *v1.VirtualMachineInstanceReplicaSet, active []*v1.VirtualMachineInstance, syncErr error) {
	s := &rs.Status
	s.Replicas = int32(len(active))
	s.ReadyReplicas = 0
	for _, vmi := range active {
		if isReady(vmi) {
			s.ReadyReplicas++
		}
	}
	// The scale subresource hands this string to an HPA, which lists pods with it.
	s.LabelSelector = ""
	if _, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector); err == nil && rs.Spec.Selector != nil {
		s.LabelSelector = metav1.FormatLabelSelector(rs.Spec.Selector)
	}

	now := metav1.NewTime(c.clock.Now())
	wasPaused := hasCondition(s, v1.VirtualMachineInstanceReplicaSetReplicaPaused)
	if rs.Spec.Paused {
		setCondition(s, v1.VirtualMachineInstanceReplicaSetCondition{Type: v1.VirtualMachineInstanceReplicaSetReplicaPaused,
			Status: corev1.ConditionTrue, Reason: "Paused", Message: "Controller got paused"}, now)
	} else {
		removeCondition(s, v1.VirtualMachineInstanceReplicaSetReplicaPaused)
	}
	switch {
	case rs.Spec.Paused && !wasPaused:
		c.recorder.Event(rs, corev1.EventTypeNormal, SuccessfulPaused, "Paused")
	case !rs.Spec.Paused && wasPaused:
		c.recorder.Event(rs, corev1.EventTypeNormal, SuccessfulResumed, "Resumed")
	}

	if syncErr == nil {
		removeCondition(s, v1.VirtualMachineInstanceReplicaSetReplicaFailure)
		return
	}
	reason := FailedCreate
	var re *replicaError
	if errors.As(syncErr, &re) {
		reason = re.reason
	}
	setCondition(s, v1.VirtualMachineInstanceReplicaSetCondition{Type: v1.VirtualMachineInstanceReplicaSetReplicaFailure,
		Status: corev1.ConditionTrue, Reason: reason, Message: strings.ReplaceAll(syncErr.Error(), "\n", "; ")}, now)
}

func hasCondition(s *v1.VirtualMachineInstanceReplicaSetStatus, t v1.VirtualMachineInstanceReplicaSetConditionType) bool {
	return condition(s, t) != nil
}

func condition(s *v1.VirtualMachineInstanceReplicaSetStatus, t v1.VirtualMachineInstanceReplicaSetConditionType) *v1.VirtualMachineInstanceReplicaSetCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// setCondition replaces the condition of the same type, keeping its transition time when the
// status did not change, so an unchanged condition never causes a status write.
func setCondition(s *v1.VirtualMachineInstanceReplicaSetStatus, cond v1.VirtualMachineInstanceReplicaSetCondition, now metav1.Time) {
	for i, existing := range s.Conditions {
		if existing.Type != cond.Type {
			continue
		}
		cond.LastProbeTime = existing.LastProbeTime
		cond.LastTransitionTime = existing.LastTransitionTime
		if existing.Status != cond.Status {
			cond.LastTransitionTime = now
		}
		s.Conditions[i] = cond
		return
	}
	cond.LastTransitionTime = now
	s.Conditions = append(s.Conditions, cond)
}

func removeCondition(s *v1.VirtualMachineInstanceReplicaSetStatus, t v1.VirtualMachineInstanceReplicaSetConditionType) {
	kept := s.Conditions[:0]
	for _, c := range s.Conditions {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	s.Conditions = kept
	if len(kept) == 0 {
		s.Conditions = nil
	}
}

package v1

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The controllers and the node agent edit an instance's status the same way, so that an
// unchanged phase or condition never makes a status write.

// SetPhase moves the instance to phase, recording when it entered it.
func (s *VirtualMachineInstanceStatus) SetPhase(phase VirtualMachineInstancePhase, reason string, now metav1.Time) {
	if s.Phase != phase {
		s.PhaseTransitionTimestamps = append(s.PhaseTransitionTimestamps,
			VirtualMachineInstancePhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: now})
	}
	s.Phase, s.Reason = phase, reason
}

// SetCondition replaces the condition of cond's type; its transition and probe times are
// kept while its status stays the same.
func (s *VirtualMachineInstanceStatus) SetCondition(cond VirtualMachineInstanceCondition, now metav1.Time) {
	cond.LastTransitionTime = now
	for i := range s.Conditions {
		if s.Conditions[i].Type != cond.Type {
			continue
		}
		if s.Conditions[i].Status == cond.Status {
			cond.LastTransitionTime = s.Conditions[i].LastTransitionTime
			cond.LastProbeTime = s.Conditions[i].LastProbeTime
		}
		s.Conditions[i] = cond
		return
	}
	s.Conditions = append(s.Conditions, cond)
}

// RemoveCondition drops the condition of type t; with a reason, only when it has that reason,
// so one component never removes what another reported.
func (s *VirtualMachineInstanceStatus) RemoveCondition(t VirtualMachineInstanceConditionType, reason string) {
	s.Conditions = slices.DeleteFunc(s.Conditions, func(c VirtualMachineInstanceCondition) bool {
		return c.Type == t && (reason == "" || c.Reason == reason)
	})
	if len(s.Conditions) == 0 {
		s.Conditions = nil
	}
}

// Condition is the condition of type t, nil when there is none.
func (s *VirtualMachineInstanceStatus) Condition(t VirtualMachineInstanceConditionType) *VirtualMachineInstanceCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// SyncVolumeStatus makes status.volumeStatus one entry per volume, in spec order, each
// starting from what the status said of it before and then changed by update: virt-controller
// fills in claims and virt-handler targets, and neither undoes the other's part. A volume no
// longer in the spec loses its entry.
func (s *VirtualMachineInstanceStatus) SyncVolumeStatus(volumes []Volume, update func(*VolumeStatus, *Volume)) {
	before := make(map[string]VolumeStatus, len(s.VolumeStatus))
	for _, vs := range s.VolumeStatus {
		before[vs.Name] = vs
	}
	var out []VolumeStatus
	for i := range volumes {
		vs, ok := before[volumes[i].Name]
		if !ok {
			vs = VolumeStatus{Name: volumes[i].Name}
		}
		update(&vs, &volumes[i])
		out = append(out, vs)
	}
	s.VolumeStatus = out
}

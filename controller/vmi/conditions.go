package vmi

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// setCondition replaces the condition of the same type, keeping its transition time while its
// status is unchanged, so an unchanged condition never causes a status write.
func setCondition(s *v1.VirtualMachineInstanceStatus, cond v1.VirtualMachineInstanceCondition, now metav1.Time) {
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

// removeCondition drops the condition of type t; with a reason, only when it has that reason,
// so the controller never removes what the node agent reported.
func removeCondition(s *v1.VirtualMachineInstanceStatus, t v1.VirtualMachineInstanceConditionType, reason string) {
	s.Conditions = slices.DeleteFunc(s.Conditions, func(c v1.VirtualMachineInstanceCondition) bool {
		return c.Type == t && (reason == "" || c.Reason == reason)
	})
	if len(s.Conditions) == 0 {
		s.Conditions = nil
	}
}

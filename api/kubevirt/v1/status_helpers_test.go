package v1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetConditionKeepsTransitionTime(t *testing.T) {
	s := &VirtualMachineInstanceStatus{}
	t0, t1 := metav1.Unix(100, 0), metav1.Unix(200, 0)
	s.SetCondition(VirtualMachineInstanceCondition{Type: VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, t0)
	s.SetCondition(VirtualMachineInstanceCondition{Type: VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, t1)
	if len(s.Conditions) != 1 || !s.Conditions[0].LastTransitionTime.Equal(&t0) {
		t.Errorf("unchanged condition moved: %+v", s.Conditions)
	}
	s.SetCondition(VirtualMachineInstanceCondition{Type: VirtualMachineInstanceReady, Status: corev1.ConditionFalse}, t1)
	if !s.Conditions[0].LastTransitionTime.Equal(&t1) {
		t.Errorf("changed condition kept its time: %+v", s.Conditions)
	}
}

func TestRemoveConditionOnlyWithItsReason(t *testing.T) {
	s := &VirtualMachineInstanceStatus{Conditions: []VirtualMachineInstanceCondition{{Type: VirtualMachineInstanceSynchronized, Reason: "SyncFailed"}}}
	s.RemoveCondition(VirtualMachineInstanceSynchronized, "FailedCreate")
	if len(s.Conditions) != 1 {
		t.Errorf("removed another component's condition: %+v", s.Conditions)
	}
	s.RemoveCondition(VirtualMachineInstanceSynchronized, "")
	if s.Conditions != nil {
		t.Errorf("conditions %+v, want nil", s.Conditions)
	}
}

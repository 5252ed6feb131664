package vmi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestSetImagePullCondition(t *testing.T) {
	waiting := func(reason, message string) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{Name: "container-disk", State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}
	}
	tests := []struct {
		name       string
		phase      v1.VirtualMachineInstancePhase
		init, main []corev1.ContainerStatus
		before     []v1.VirtualMachineInstanceCondition
		want       string // reason: message, "" for no condition
	}{
		{name: "image cannot be pulled", init: waiting("ErrImagePull", "not found"), want: "ErrImagePull: container-disk: not found"},
		{name: "pull backing off", main: waiting("ImagePullBackOff", "Back-off"), want: "ImagePullBackOff: container-disk: Back-off"},
		{name: "creating is no error", main: waiting("ContainerCreating", "")},
		{name: "running: virt-handler's to say", phase: v1.Running, main: waiting("ImagePullBackOff", "Back-off")},
		{name: "running: a stale one goes", phase: v1.Running, main: waiting("ImagePullBackOff", "Back-off"),
			before: []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse, Reason: "ErrImagePull"}}},
		{name: "pulled at last", main: waiting("ContainerCreating", ""),
			before: []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse, Reason: "ImagePullBackOff"}}},
		{name: "another reason's condition stays", main: waiting("ContainerCreating", ""),
			before: []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse, Reason: "FailedCreate", Message: "quota"}},
			want:   "FailedCreate: quota"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := v1.VirtualMachineInstanceStatus{Conditions: tt.before}
			pod := &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: tt.init, ContainerStatuses: tt.main}}
			phase := tt.phase
			if phase == "" {
				phase = v1.Scheduled
			}
			setImagePullCondition(&s, pod, phase, metav1.Now())
			got := ""
			if c := s.Condition(v1.VirtualMachineInstanceSynchronized); c != nil {
				got = c.Reason + ": " + c.Message
			}
			if got != tt.want {
				t.Errorf("Synchronized %q, want %q", got, tt.want)
			}
		})
	}
}

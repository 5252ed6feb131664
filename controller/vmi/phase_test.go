package vmi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestNextPhase(t *testing.T) {
	pod := func(phase corev1.PodPhase, node string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
	}
	tests := []struct {
		name        string
		phase       v1.VirtualMachineInstancePhase
		pod         *corev1.Pod
		podExpected bool
		copying     bool // a migration is copying the guest away
		want        v1.VirtualMachineInstancePhase
		wantReason  string
	}{
		{"new instance without a pod", v1.VmPhaseUnset, nil, false, false, v1.Pending, ""},
		{"pod just created, not in the cache yet", v1.Pending, nil, true, false, v1.Scheduling, ""},
		{"pod pending", v1.Pending, pod(corev1.PodPending, ""), false, false, v1.Scheduling, ""},
		{"pod bound but not running", v1.Scheduling, pod(corev1.PodPending, "node-a"), false, false, v1.Scheduled, ""},
		{"pod running on a node", v1.Scheduling, pod(corev1.PodRunning, "node-a"), false, false, v1.Scheduled, ""},
		{"running is the node's word", v1.Running, pod(corev1.PodRunning, "node-a"), false, false, v1.Running, ""},
		{"pod deleted under a scheduled instance", v1.Scheduled, nil, false, false, v1.Failed, "PodDeleted"},
		{"pod deleted under a running instance", v1.Running, nil, false, false, v1.Failed, "PodDeleted"},
		{"pod failed", v1.Running, pod(corev1.PodFailed, "node-a"), false, false, v1.Failed, "PodFailed"},
		{"launcher exited after the guest shut down", v1.Running, pod(corev1.PodSucceeded, "node-a"), false, false, v1.Succeeded, ""},
		{"launcher exited before the guest ran", v1.Scheduled, pod(corev1.PodSucceeded, "node-a"), false, false, v1.Failed, "PodExitedBeforeRunning"},
		{"final phases stay", v1.Succeeded, nil, false, false, v1.Succeeded, ""},
		{"source launcher exited while the guest moves", v1.Running, pod(corev1.PodSucceeded, "node-a"), false, true, v1.Running, ""},
		{"source pod gone while the guest moves", v1.Running, nil, false, true, v1.Running, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &v1.VirtualMachineInstance{Status: v1.VirtualMachineInstanceStatus{Phase: tt.phase}}
			if tt.copying {
				vmi.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{StartTimestamp: &metav1.Time{}}
			}
			got, reason := nextPhase(vmi, tt.pod, tt.podExpected)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("got %s (%q), want %s (%q)", got, reason, tt.want, tt.wantReason)
			}
		})
	}
}

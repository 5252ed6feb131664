package vm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestPrintableStatus(t *testing.T) {
	deleting := func(o metav1.Object) { o.SetDeletionTimestamp(ptr.To(metav1.Now())) }
	vm := func(mutate ...func(metav1.Object)) *v1.VirtualMachine {
		m := &v1.VirtualMachine{}
		for _, f := range mutate {
			f(m)
		}
		return m
	}
	vmi := func(phase v1.VirtualMachineInstancePhase, mutate ...func(metav1.Object)) *v1.VirtualMachineInstance {
		i := instance(phase)
		for _, f := range mutate {
			f(i)
		}
		return i
	}
	paused := instance(v1.Running)
	paused.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: corev1.ConditionTrue}}
	migrating, migrated := instance(v1.Running), instance(v1.Running)
	migrating.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{StartTimestamp: &metav1.Time{}}
	migrated.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{StartTimestamp: &metav1.Time{}, EndTimestamp: &metav1.Time{}, Completed: true}
	waitingForClaim := instance(v1.Pending)
	waitingForClaim.Status.Conditions = []v1.VirtualMachineInstanceCondition{{
		Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse, Reason: v1.VirtualMachineInstanceReasonPvcNotFound}}
	unschedulable := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}}}
	waiting := func(reason string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}}}
	}

	tests := []struct {
		name string
		o    observed
		want v1.VirtualMachinePrintableStatus
	}{
		{"VM being deleted", observed{vm: vm(deleting), vmi: vmi(v1.Running)}, v1.VirtualMachineStatusTerminating},
		{"instance being deleted", observed{vm: vm(), vmi: vmi(v1.Running, deleting)}, v1.VirtualMachineStatusStopping},
		{"instance just deleted, not yet so in the cache", observed{vm: vm(), vmi: vmi(v1.Running), stopping: true}, v1.VirtualMachineStatusStopping},
		{"final instance being deleted", observed{vm: vm(), vmi: vmi(v1.Succeeded, deleting)}, v1.VirtualMachineStatusStopped},
		{"paused", observed{vm: vm(), vmi: paused}, v1.VirtualMachineStatusPaused},
		{"memory being copied to another node", observed{vm: vm(), vmi: migrating}, v1.VirtualMachineStatusMigrating},
		{"migrated", observed{vm: vm(), vmi: migrated}, v1.VirtualMachineStatusRunning},
		{"running", observed{vm: vm(), vmi: vmi(v1.Running)}, v1.VirtualMachineStatusRunning},
		{"instance waiting for its claim", observed{vm: vm(), vmi: waitingForClaim}, v1.VirtualMachineStatusPvcNotFound},
		{"unschedulable pod", observed{vm: vm(), vmi: vmi(v1.Scheduling), pod: unschedulable}, v1.VirtualMachineStatusUnschedulable},
		{"image pull error", observed{vm: vm(), vmi: vmi(v1.Scheduled), pod: waiting("ErrImagePull")}, v1.VirtualMachineStatusErrImagePull},
		{"image pull backoff", observed{vm: vm(), vmi: vmi(v1.Scheduled), pod: waiting("ImagePullBackOff")}, v1.VirtualMachineStatusImagePullBackOff},
		{"other waiting reason is still starting", observed{vm: vm(), vmi: vmi(v1.Scheduled), pod: waiting("ContainerCreating")}, v1.VirtualMachineStatusStarting},
		{"pending instance", observed{vm: vm(), vmi: vmi(v1.Pending)}, v1.VirtualMachineStatusStarting},
		{"instance about to be created", observed{vm: vm(), starting: true}, v1.VirtualMachineStatusStarting},
		{"crash loop backoff", observed{vm: vm(), backingOff: true}, v1.VirtualMachineStatusCrashLoopBackOff},
		{"no instance", observed{vm: vm()}, v1.VirtualMachineStatusStopped},
		{"guest shut down", observed{vm: vm(), vmi: vmi(v1.Succeeded)}, v1.VirtualMachineStatusStopped},
		{"node unreachable", observed{vm: vm(), vmi: vmi(v1.Unknown)}, v1.VirtualMachineStatusUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := printableStatus(tt.o); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

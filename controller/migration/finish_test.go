package migration

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestPlan(t *testing.T) {
	now := metav1.Now()
	migration := func(phase v1.VirtualMachineInstanceMigrationPhase, deleted bool) *v1.VirtualMachineInstanceMigration {
		m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{UID: "m1"}}
		m.Status.Phase = phase
		if deleted {
			m.DeletionTimestamp = &now
		}
		return m
	}
	succeeded := migration(v1.MigrationSucceeded, false)
	succeeded.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", Completed: true, TargetPod: "target-a"}
	instance := func(phase v1.VirtualMachineInstancePhase, state *v1.VirtualMachineInstanceMigrationState) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{}
		vmi.Status.Phase, vmi.Status.MigrationState = phase, state
		return vmi
	}
	prepared := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", TargetPod: "target-a"}
	copyRunning := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", TargetPod: "target-a", StartTimestamp: &now}
	copied := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", TargetPod: "target-a", StartTimestamp: &now, Completed: true}
	copyFailed := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", TargetPod: "target-a", StartTimestamp: &now, Completed: true, Failed: true}
	newer := &v1.VirtualMachineInstanceMigrationState{MigrationUID: "m2", TargetPod: "target-b", StartTimestamp: &now}
	deleting := instance(v1.Running, copyRunning)
	deleting.DeletionTimestamp = ptr.To(now)

	tests := []struct {
		name     string
		m        *v1.VirtualMachineInstanceMigration
		vmi      *v1.VirtualMachineInstance
		want     ending
		wantKeep string
	}{
		{"cancelled before the hand-over", migration(v1.MigrationScheduling, true), instance(v1.Running, nil), cleanUp, ""},
		{"cancelled once the target is ready", migration(v1.MigrationTargetReady, true), instance(v1.Running, prepared), endFirst, ""},
		{"cancelled while copying", migration(v1.MigrationRunning, true), instance(v1.Running, copyRunning), abortAndWait, ""},
		{"cancelled while copying, the cache behind on the phase", migration(v1.MigrationTargetReady, true), instance(v1.Running, copyRunning), abortAndWait, ""},
		{"failed verdict while copying", migration(v1.MigrationFailed, false), instance(v1.Running, copyRunning), abortAndWait, ""},
		{"cancelled just after the copy completed", migration(v1.MigrationRunning, true), instance(v1.Running, copied), cleanUp, "target-a"},
		{"succeeded", succeeded, instance(v1.Running, copied), cleanUp, "target-a"},
		{"succeeded, a newer migration since", succeeded, instance(v1.Running, newer), cleanUp, "target-a"},
		{"the source reported the failure", migration(v1.MigrationFailed, false), instance(v1.Running, copyFailed), cleanUp, ""},
		{"the instance ended while copying", migration(v1.MigrationFailed, false), instance(v1.Failed, copyRunning), endFirst, ""},
		{"the instance is deleted while copying", migration(v1.MigrationFailed, false), deleting, endFirst, ""},
		{"the instance is gone", migration(v1.MigrationFailed, false), nil, cleanUp, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, keep := plan(tt.m, tt.vmi)
			if got != tt.want || keep != tt.wantKeep {
				t.Errorf("plan = %d %q, want %d %q", got, keep, tt.want, tt.wantKeep)
			}
		})
	}
}

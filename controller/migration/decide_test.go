package migration

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestDecide(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	migration := func(phase v1.VirtualMachineInstanceMigrationPhase) *v1.VirtualMachineInstanceMigration {
		m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{UID: "m1"}, Spec: v1.VirtualMachineInstanceMigrationSpec{VMIName: "vm"}}
		m.Status.Phase = phase
		m.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstanceMigrationPhaseTransitionTimestamp{
			{Phase: v1.MigrationScheduling, PhaseTransitionTimestamp: metav1.NewTime(start)}}
		return m
	}
	running := func(state *v1.VirtualMachineInstanceMigrationState) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{}
		vmi.Status.Phase, vmi.Status.NodeName, vmi.Status.MigrationState = v1.Running, "node1", state
		return vmi
	}
	pod := func(node string, phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "target"}}
		p.Spec.NodeName, p.Status.Phase = node, phase
		return p
	}
	unschedulable := pod("", corev1.PodPending)
	unschedulable.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: "Unschedulable", Message: "didn't match pod anti-affinity rules"}}
	notMigratable := running(nil)
	notMigratable.Status.Conditions = []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstanceIsMigratable,
		Status: corev1.ConditionFalse, Reason: v1.VirtualMachineInstanceReasonDisksNotMigratable, Message: "PVC disk is not shared"}}
	onTarget := running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", Completed: true, TargetNode: "node2"})
	onTarget.Status.NodeName = "node2"
	ended := running(nil)
	ended.Status.Phase = v1.Succeeded

	tests := []struct {
		name      string
		m         *v1.VirtualMachineInstanceMigration
		vmi       *v1.VirtualMachineInstance
		target    *corev1.Pod
		creating  bool
		after     time.Duration
		want      v1.VirtualMachineInstanceMigrationPhase
		wantCause string
	}{
		{"new migration waits for a slot", migration(""), running(nil), nil, false, 0, v1.MigrationPending, ""},
		{"instance cannot migrate", migration(v1.MigrationPending), notMigratable, nil, false, 0, v1.MigrationFailed, "cannot live-migrate: DisksNotLiveMigratable: PVC disk is not shared"},
		{"started, the cache behind", migration(v1.MigrationPending), running(nil), pod("", corev1.PodPending), false, 0, v1.MigrationScheduling, ""},
		{"instance missing", migration(v1.MigrationPending), nil, nil, false, 0, v1.MigrationFailed, "does not exist"},
		{"instance ended", migration(v1.MigrationScheduling), ended, pod("node2", corev1.PodRunning), false, 0, v1.MigrationFailed, "has ended"},
		{"target being created", migration(v1.MigrationScheduling), running(nil), nil, true, 0, v1.MigrationScheduling, ""},
		{"target gone", migration(v1.MigrationScheduling), running(nil), nil, false, 0, v1.MigrationFailed, "target pod is gone"},
		{"target not yet bound", migration(v1.MigrationScheduling), running(nil), pod("", corev1.PodPending), false, time.Minute, v1.MigrationScheduling, ""},
		{"target unschedulable past the timeout", migration(v1.MigrationScheduling), running(nil), unschedulable, false, 6 * time.Minute, v1.MigrationFailed, "anti-affinity"},
		{"target runs", migration(v1.MigrationScheduling), running(nil), pod("node2", corev1.PodRunning), false, 0, v1.MigrationScheduled, ""},
		{"target failed", migration(v1.MigrationScheduled), running(nil), pod("node2", corev1.PodFailed), false, 0, v1.MigrationFailed, "ended (Failed)"},
		{"scheduled: hand over", migration(v1.MigrationScheduled), running(nil), pod("node2", corev1.PodRunning), false, 0, v1.MigrationPreparingTarget, ""},
		{"hand-over lost", migration(v1.MigrationPreparingTarget), running(nil), pod("node2", corev1.PodRunning), false, 0, v1.MigrationFailed, "no longer names"},
		{"target preparing", migration(v1.MigrationPreparingTarget), running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1"}),
			pod("node2", corev1.PodRunning), false, time.Minute, v1.MigrationPreparingTarget, ""},
		{"target never prepared", migration(v1.MigrationPreparingTarget), running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1"}),
			pod("node2", corev1.PodRunning), false, 6 * time.Minute, v1.MigrationFailed, "did not prepare"},
		{"target ready", migration(v1.MigrationPreparingTarget), running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", TargetNodeAddress: "10.0.0.2"}),
			pod("node2", corev1.PodRunning), false, 0, v1.MigrationTargetReady, ""},
		{"copy started", migration(v1.MigrationTargetReady), running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", TargetNodeAddress: "10.0.0.2",
			StartTimestamp: ptr.To(metav1.NewTime(start))}), pod("node2", corev1.PodRunning), false, 10 * time.Minute, v1.MigrationRunning, ""},
		{"copy failed", migration(v1.MigrationRunning), running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", Completed: true, Failed: true,
			FailureReason: "target QEMU exited"}), pod("node2", corev1.PodRunning), false, 0, v1.MigrationFailed, "target QEMU exited"},
		{"copy done, the instance not yet on the target node", migration(v1.MigrationRunning),
			running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m1", Completed: true, TargetNode: "node2"}),
			pod("node2", corev1.PodRunning), false, 0, v1.MigrationRunning, ""},
		{"copy done, the instance on the target node", migration(v1.MigrationRunning), onTarget,
			pod("node2", corev1.PodRunning), false, 0, v1.MigrationSucceeded, ""},
		{"another migration's state", migration(v1.MigrationRunning), running(&v1.VirtualMachineInstanceMigrationState{MigrationUID: "m0", Completed: true}),
			pod("node2", corev1.PodRunning), false, 0, v1.MigrationFailed, "no longer names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cause := decide(tt.m, tt.vmi, tt.target, tt.creating, start.Add(tt.after), 5*time.Minute)
			if got != tt.want || !strings.Contains(cause, tt.wantCause) || (tt.wantCause == "") != (cause == "") {
				t.Errorf("decide = %s %q, want %s %q", got, cause, tt.want, tt.wantCause)
			}
		})
	}
}

func TestInFlightCount(t *testing.T) {
	migration := func(name string, phase v1.VirtualMachineInstanceMigrationPhase, source string) *v1.VirtualMachineInstanceMigration {
		m := &v1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		m.Status.Phase = phase
		m.Status.MigrationState = &v1.VirtualMachineInstanceMigrationState{SourceNode: source}
		return m
	}
	all := []*v1.VirtualMachineInstanceMigration{
		migration("running", v1.MigrationRunning, "node1"),
		migration("scheduling", v1.MigrationScheduling, "node2"),
		migration("pending", v1.MigrationPending, "node1"),
		migration("done", v1.MigrationSucceeded, "node1"),
		migration("started-unseen", v1.MigrationPending, ""),
	}
	f := newInFlight()
	f.start("ns/started-unseen", "node1") // this controller's write, not in the cache yet
	f.start("ns/scheduling", "node2")     // seen: counted once
	if cluster, fromNode := f.count(all, "node1"); cluster != 3 || fromNode != 2 {
		t.Errorf("count = %d in the cluster, %d from node1; want 3, 2", cluster, fromNode)
	}
	if _, seen := f.started["ns/scheduling"]; seen {
		t.Error("a migration the cache shows started is still remembered")
	}
}

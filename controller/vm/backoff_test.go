package vm

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func noJitter(time.Duration) time.Duration { return 0 }

func TestBackoffGrowsQuadraticallyToTheCap(t *testing.T) {
	want := map[int]time.Duration{1: 10 * time.Second, 2: 40 * time.Second, 3: 90 * time.Second, 5: 250 * time.Second, 6: 300 * time.Second, 1000: 300 * time.Second}
	for failures, d := range want {
		if got := backoffFor(failures, noJitter); got != d {
			t.Errorf("backoffFor(%d) = %s, want %s", failures, got, d)
		}
	}
	if got := backoffFor(6, randomJitter); got < 300*time.Second || got >= 330*time.Second {
		t.Errorf("jitter out of range: %s", got)
	}
}

func TestNextStartFailure(t *testing.T) {
	now := time.Now()
	failed := instance(v1.Failed)
	ranThenFailed := instance(v1.Failed)
	ranThenFailed.Status.PhaseTransitionTimestamps = []v1.VirtualMachineInstancePhaseTransitionTimestamp{{Phase: v1.Running}}
	one := &v1.VirtualMachineStartFailure{ConsecutiveFailCount: 1, LastFailedVMIUID: "older"}
	tests := []struct {
		name      string
		current   *v1.VirtualMachineStartFailure
		vmi       *v1.VirtualMachineInstance
		wantCount int
	}{
		{"first failure", nil, failed, 1},
		{"another failure", one, failed, 2},
		{"same instance counted once", &v1.VirtualMachineStartFailure{ConsecutiveFailCount: 2, LastFailedVMIUID: currentUID}, failed, 2},
		{"running clears", one, instance(v1.Running), 0},
		{"an instance that ran is no start failure", one, ranThenFailed, 1},
		{"still starting changes nothing", one, instance(v1.Scheduling), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nextStartFailure(tt.current, tt.vmi, now, noJitter)
			count := 0
			if got != nil {
				count = got.ConsecutiveFailCount
			}
			if count != tt.wantCount {
				t.Fatalf("count = %d, want %d", count, tt.wantCount)
			}
			if got != nil && got != tt.current && !got.RetryAfterTimestamp.Equal(ptrTime(now.Add(backoffFor(count, noJitter)))) {
				t.Errorf("retry after %v, want now + %s", got.RetryAfterTimestamp, backoffFor(count, noJitter))
			}
		})
	}
}

func ptrTime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

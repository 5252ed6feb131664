package vm

import (
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

const (
	backoffUnit = 10 * time.Second
	backoffCap  = 300 * time.Second
)

// backoffFor is the wait before start number failures+1: 10 s x n^2, capped at 300 s, plus
// up to 10% jitter so VMs failing together do not retry together.
func backoffFor(failures int, jitter func(time.Duration) time.Duration) time.Duration {
	d := backoffUnit * time.Duration(failures*failures)
	if d > backoffCap || failures > 100 {
		d = backoffCap
	}
	return d + jitter(d/10)
}

func randomJitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return rand.N(max)
}

// nextStartFailure is the crash-loop bookkeeping after observing vmi: a final instance that
// never ran counts one more consecutive failure (once per instance); a running one clears it.
func nextStartFailure(current *v1.VirtualMachineStartFailure, vmi *v1.VirtualMachineInstance, now time.Time,
	jitter func(time.Duration) time.Duration) *v1.VirtualMachineStartFailure {
	if vmi == nil {
		return current
	}
	if vmi.Status.Phase == v1.Running {
		return nil
	}
	if !vmi.Status.Phase.IsFinal() || reachedRunning(vmi) {
		return current
	}
	if current != nil && current.LastFailedVMIUID == vmi.UID {
		return current
	}
	count := 1
	if current != nil {
		count = current.ConsecutiveFailCount + 1
	}
	retry := metav1.NewTime(now.Add(backoffFor(count, jitter)))
	return &v1.VirtualMachineStartFailure{ConsecutiveFailCount: count, RetryAfterTimestamp: &retry, LastFailedVMIUID: vmi.UID}
}

func reachedRunning(vmi *v1.VirtualMachineInstance) bool {
	for _, t := range vmi.Status.PhaseTransitionTimestamps {
		if t.Phase == v1.Running {
			return true
		}
	}
	return false
}

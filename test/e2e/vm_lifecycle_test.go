//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// bootTimeout bounds a real TCG guest's way from VM start to Running on a busy 2-core node.
const bootTimeout = 3 * time.Minute

// TestKubectlGetVMFollowsAStartStopCycle: a VM created halted shows Stopped; started it shows
// Starting, then Running with a real guest; halted again it shows Stopping, then Stopped.
func TestKubectlGetVMFollowsAStartStopCycle(t *testing.T) {
	f := framework.New(t)
	seen := f.RecordPrintableStatuses("cycle")
	f.CreateVM(framework.TestGuestVM("cycle", v1.RunStrategyHalted))
	f.WaitVMStatus("cycle", v1.VirtualMachineStatusStopped, time.Minute)

	f.SetRunStrategy("cycle", v1.RunStrategyAlways)
	vm := f.WaitVMStatus("cycle", v1.VirtualMachineStatusRunning, bootTimeout)
	if !vm.Status.Ready {
		f.WaitVMReady("cycle", time.Minute)
	}
	if out := f.Kubectl("get", "vm", "cycle"); !strings.Contains(out, "Running") || !strings.Contains(out, "True") {
		t.Errorf("kubectl get vm:\n%s\nwant STATUS Running and READY True", out)
	}

	f.SetRunStrategy("cycle", v1.RunStrategyHalted)
	f.WaitVMStatus("cycle", v1.VirtualMachineStatusStopped, 2*time.Minute)

	want := []v1.VirtualMachinePrintableStatus{v1.VirtualMachineStatusStopped, v1.VirtualMachineStatusStarting,
		v1.VirtualMachineStatusRunning, v1.VirtualMachineStatusStopping, v1.VirtualMachineStatusStopped}
	if got := seen(); !isSubsequence(want, got) {
		t.Errorf("printable statuses seen %v, want %v in that order", got, want)
	}
}

// isSubsequence reports whether want appears in got in order, other entries in between.
func isSubsequence(want, got []v1.VirtualMachinePrintableStatus) bool {
	i := 0
	for _, s := range got {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	return i == len(want)
}

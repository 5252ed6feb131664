//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestVirtctlStartPausedAndDryRun: --dry-run on start, stop and restart checks the request
// and changes nothing; virtctl start --paused starts a halted VM with its guest paused (the VM
// shows Paused) until virtctl unpause lets it run.
func TestVirtctlStartPausedAndDryRun(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("held", v1.RunStrategyHalted))
	f.WaitVMStatus("held", v1.VirtualMachineStatusStopped, time.Minute)

	virtctl := func(args ...string) string {
		t.Helper()
		out, err := f.Virtctl(args...)
		if err != nil {
			t.Fatalf("virtctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	if out := virtctl("start", "held", "--dry-run"); !strings.Contains(out, "Dry Run execution") {
		t.Errorf("virtctl start --dry-run said %q", out)
	}
	if s := f.Kubectl("get", "vm", "held", "-o", "jsonpath={.spec.runStrategy}"); s != "Halted" {
		t.Errorf("after a dry-run start the VM's runStrategy is %q, want Halted", s)
	}

	virtctl("start", "held", "--paused")
	f.WaitVMStatus("held", v1.VirtualMachineStatusPaused, bootTimeout)
	if s := f.Kubectl("get", "vm", "held", "-o", "jsonpath={.spec.runStrategy}"); s != "Always" {
		t.Errorf("a paused start left the VM's runStrategy %q, want Always", s)
	}
	first := f.WaitVMIPhase("held", v1.Running, time.Minute)
	if c := first.Status.Condition(v1.VirtualMachineInstancePaused); c == nil || c.Status != "True" {
		t.Errorf("instance started paused has Paused %+v, want True", c)
	}

	virtctl("restart", "held", "--dry-run")
	virtctl("stop", "held", "--dry-run", "--force", "--grace-period=0")
	if vmi := f.WaitVMIPhase("held", v1.Running, time.Minute); vmi.UID != first.UID {
		t.Errorf("dry runs replaced the instance")
	}

	virtctl("unpause", "vm", "held")
	f.WaitVMStatus("held", v1.VirtualMachineStatusRunning, time.Minute)
}

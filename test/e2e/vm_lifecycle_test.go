//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	// KubeVirt's wide columns for instances.
	if out := f.Kubectl("get", "vmi", "cycle", "-o", "wide"); !strings.Contains(out, "LIVE-MIGRATABLE") || !strings.Contains(out, "PAUSED") {
		t.Errorf("kubectl get vmi -o wide:\n%s\nwant LIVE-MIGRATABLE and PAUSED columns", out)
	}
	// KubeVirt's node label, by which users list a node's instances.
	node := f.Kubectl("get", "vmi", "cycle", "-o", "jsonpath={.status.nodeName}")
	if out := f.Kubectl("get", "vmi", "-l", "kubevirt.io/nodeName="+node, "-o", "name"); node == "" || !strings.Contains(out, "virtualmachineinstance.kubevirt.io/cycle") {
		t.Errorf("kubectl get vmi -l kubevirt.io/nodeName=%s:\n%s\nwant the instance", node, out)
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

// TestEditingARunningVMAsksForARestart: as in KubeVirt, an edit of a running VM's template
// waits for the next start, and the VM says so with its RestartRequired condition until
// virtctl restart runs the edited template.
func TestEditingARunningVMAsksForARestart(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("edited", v1.RunStrategyAlways))
	first := f.WaitVMIPhase("edited", v1.Running, bootTimeout)

	f.Kubectl("patch", "vm", "edited", "--type", "merge", "-p", `{"spec":{"template":{"spec":{"domain":{"resources":{"requests":{"memory":"160Mi"}}}}}}}`)
	f.Kubectl("wait", "vm", "edited", "--for", "condition=RestartRequired", "--timeout", "60s")
	if out := f.Kubectl("get", "vmi", "edited", "-o", "jsonpath={.metadata.uid} {.spec.domain.resources.requests.memory}"); out != string(first.UID)+" 128Mi" {
		t.Errorf("instance after the edit: %q, want the same instance with 128Mi", out)
	}

	if out, err := f.Virtctl("restart", "edited"); err != nil {
		t.Fatalf("virtctl restart: %v\n%s", err, out)
	}
	second := f.WaitNewRunningVMI("edited", first.UID, bootTimeout)
	if got := second.Spec.Domain.Resources.Requests.Memory().String(); got != "160Mi" {
		t.Errorf("restarted instance requests %s, want the edited 160Mi", got)
	}
	f.Eventually(time.Minute, "the restart to clear RestartRequired", func(ctx context.Context) (bool, error) {
		vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(ctx, "edited", metav1.GetOptions{})
		return err == nil && !slices.ContainsFunc(vm.Status.Conditions, func(c v1.VirtualMachineCondition) bool {
			return c.Type == v1.VirtualMachineRestartRequired
		}), err
	})
}

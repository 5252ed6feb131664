//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

var tickLine = regexp.MustCompile(`VMCTL-TICK (\d+)`)

// lastTick is the last tick the guest printed on its console, 0 before the first.
func lastTick(console string) int {
	m := tickLine.FindAllStringSubmatch(console, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// pausedCondition is the instance's Paused condition, nil when it has none.
func pausedCondition(f *framework.Framework, ctx context.Context, name string) (*v1.VirtualMachineInstanceCondition, *v1.VirtualMachineInstance, error) {
	vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	return vmi.Status.Condition(v1.VirtualMachineInstancePaused), vmi, nil
}

// TestPauseUnpauseAndSoftReboot follows the user guide's lifecycle verbs on a VM whose guest
// prints a tick on its serial console every second: `virtctl pause vm` freezes the guest (no
// more ticks; the instance is Paused, still Running, and `kubectl get vm` says Paused),
// `virtctl unpause` lets it tick on, and `virtctl soft-reboot` makes it power off on the ACPI
// button and boot again in the same pod. Refusals come back as 409s saying why, and only a
// user with edit may pause.
func TestPauseUnpauseAndSoftReboot(t *testing.T) {
	f := framework.New(t)
	vm := framework.TestGuestVM("ticker", v1.RunStrategyAlways)
	vm.Spec.Template.Spec.Domain.Firmware.KernelBoot.KernelArgs += " vmctl.tick=1"
	f.CreateVM(vm)
	vmi := f.WaitVMIPhase("ticker", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	console := f.FollowConsole(pod)
	f.WaitConsole(console, "VMCTL-TICK 3", bootTimeout)

	// Who may: a viewer is refused; an editor's dry run passes and changes nothing.
	viewer := f.UserKubeconfig("viewer", "view")
	editor := f.UserKubeconfig("editor", "edit")
	if out, err := f.VirtctlAs(viewer, "pause", "vmi", "ticker"); err == nil || !strings.Contains(strings.ToLower(out), "forbidden") {
		t.Fatalf("viewer's pause: %v\n%s\nwant 403 Forbidden", err, out)
	}
	f.Eventually(30*time.Second, "the editor's dry-run pause to pass", func(context.Context) (bool, error) {
		out, err := f.VirtctlAs(editor, "pause", "vm", "ticker", "--dry-run")
		return err == nil && strings.Contains(out, "Dry Run execution"), nil
	})

	// Pause: the guest stops ticking; the instance stays Running with Paused True.
	if out, err := f.Virtctl("pause", "vm", "ticker"); err != nil || !strings.Contains(out, "VMI ticker was scheduled to pause") {
		t.Fatalf("virtctl pause vm ticker: %v\n%s", err, out)
	}
	f.Eventually(time.Minute, "the VMI's Paused condition", func(ctx context.Context) (bool, error) {
		c, vmi, err := pausedCondition(f, ctx, "ticker")
		if err != nil || c == nil {
			return false, err
		}
		if c.Status != corev1.ConditionTrue || c.Reason != "PausedByUser" || vmi.Status.Phase != v1.Running {
			t.Fatalf("Paused %+v in phase %s, want True, PausedByUser, Running", c, vmi.Status.Phase)
		}
		return true, nil
	})
	f.WaitVMStatus("ticker", v1.VirtualMachineStatusPaused, time.Minute)
	f.Kubectl("wait", "vm", "ticker", "--for=condition=Paused", "--timeout=60s")
	if out := f.Kubectl("get", "vm", "ticker"); !strings.Contains(out, "Paused") {
		t.Errorf("kubectl get vm:\n%s\nwant STATUS Paused", out)
	}
	if msg := f.Kubectl("get", "vmi", "ticker", "-o", `jsonpath={.status.conditions[?(@.type=="Paused")].message}`); msg != "VMI was paused by user" {
		t.Errorf("the Paused condition's message %q", msg)
	}
	time.Sleep(3 * time.Second) // ticks printed before the pause may still be on their way to the log
	frozen := lastTick(console())
	time.Sleep(6 * time.Second)
	if now := lastTick(console()); now != frozen {
		t.Fatalf("the paused guest ticked from %d to %d", frozen, now)
	}
	t.Logf("frozen at tick %d", frozen)
	expectVirtctl(t, f, "VMI is already paused", "pause", "vmi", "ticker")
	expectVirtctl(t, f, "VMI is paused", "soft-reboot", "ticker")

	// Unpause: it ticks on from where it stopped; Paused is gone, the VM is Running.
	if out, err := f.Virtctl("unpause", "vm", "ticker"); err != nil || !strings.Contains(out, "VMI ticker was scheduled to unpause") {
		t.Fatalf("virtctl unpause vm ticker: %v\n%s", err, out)
	}
	f.Eventually(time.Minute, "the guest to tick again", func(context.Context) (bool, error) {
		return lastTick(console()) >= frozen+2, nil
	})
	f.Eventually(time.Minute, "the Paused condition to go", func(ctx context.Context) (bool, error) {
		c, _, err := pausedCondition(f, ctx, "ticker")
		return err == nil && c == nil, err
	})
	f.WaitVMStatus("ticker", v1.VirtualMachineStatusRunning, time.Minute)
	expectVirtctl(t, f, "VMI is not paused", "unpause", "vmi", "ticker")

	// Soft reboot: the guest hears the power button, powers off, and QEMU boots it again in
	// the same pod; the instance is the same one, Running throughout.
	boots := strings.Count(console(), framework.GuestMarker)
	if out, err := f.Virtctl("soft-reboot", "ticker"); err != nil || !strings.Contains(out, "VMI ticker was scheduled to soft-reboot") {
		t.Fatalf("virtctl soft-reboot ticker: %v\n%s", err, out)
	}
	f.WaitConsole(console, "VMCTL-GUEST-POWEROFF", time.Minute)
	f.Eventually(2*time.Minute, "the guest to boot again", func(context.Context) (bool, error) {
		return strings.Count(console(), framework.GuestMarker) > boots, nil
	})
	after := f.WaitVMIPhase("ticker", v1.Running, time.Minute)
	if after.UID != vmi.UID || f.LauncherPod(after).UID != pod.UID {
		t.Errorf("the soft reboot replaced the instance or its pod (VMI %s -> %s, pod %s -> %s)", vmi.UID, after.UID, pod.UID, f.LauncherPod(after).UID)
	}
}

// TestVirtctlVersionNamesTheServer: `virtctl version` prints its own version and virt-api's,
// KubeVirt's shape, which any authenticated user may read.
func TestVirtctlVersionNamesTheServer(t *testing.T) {
	f := framework.New(t)
	viewer := f.UserKubeconfig("reader", "view")
	var out string
	f.Eventually(30*time.Second, "virtctl version as a viewer", func(context.Context) (bool, error) {
		var err error
		out, err = f.VirtctlAs(viewer, "version")
		return err == nil, nil
	})
	server := regexp.MustCompile(`Server Version: version\.Info\{GitVersion:"v[^"]+", GitCommit:"[0-9a-f]{40}", GitTreeState:"(clean|dirty)", BuildDate:"[^"]+", GoVersion:"go[^"]+", Compiler:"gc", Platform:"linux/amd64"\}`)
	if !strings.Contains(out, "Client Version: version.Info{") || !server.MatchString(out) {
		t.Fatalf("virtctl version:\n%s", out)
	}
}

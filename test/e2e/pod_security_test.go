//go:build e2e

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestKernelBootExampleRunsUnderRestrictedPodSecurity: examples/vmi-kernelboot.yaml, applied
// as it is in a namespace that enforces Pod Security "restricted", runs and its guest boots.
func TestKernelBootExampleRunsUnderRestrictedPodSecurity(t *testing.T) {
	f := framework.New(t)
	ns, err := f.Kube.CoreV1().Namespaces().Get(f.Context(), f.Namespace, metav1.GetOptions{})
	if err != nil || ns.Labels[framework.RestrictedLabel] != "restricted" {
		t.Fatalf("namespace %s does not enforce restricted: %v %v", f.Namespace, ns.Labels, err)
	}
	f.CreateObjects(f.Example("vmi-kernelboot.yaml")...)
	vmi := f.WaitVMIPhase("vmi-kernelboot", v1.Running, bootTimeout)
	f.WaitConsole(f.FollowConsole(f.LauncherPod(vmi)), framework.GuestMarker+" hostname=vmi-kernelboot", bootTimeout)
}

// TestATenantInTheLauncherHasNoPrivilege: a user with the namespace's edit role may exec into
// the launcher, and finds there a non-root user without any capability, as is QEMU.
func TestATenantInTheLauncherHasNoPrivilege(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("shell", v1.RunStrategyAlways))
	vmi := f.WaitVMIPhase("shell", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	editor := f.UserKubeconfig("editor", "edit")

	for _, c := range pod.Spec.Containers {
		out, err := f.KubectlAs(editor, "", "exec", pod.Name, "-c", c.Name, "--", "sh", "-c", "grep -E '^(Uid|Gid|CapEff|CapPrm):' /proc/self/status")
		if err != nil {
			t.Fatalf("exec into %s as an editor: %v\n%s", c.Name, err, out)
		}
		assertUnprivileged(t, "a shell in container "+c.Name, out)
	}
	// QEMU is the process a guest escape would land in.
	var out string
	f.Eventually(time.Minute, "QEMU's process status", func(context.Context) (bool, error) {
		var err error
		out, err = f.KubectlAs(editor, "", "exec", pod.Name, "-c", "compute", "--", "sh", "-c",
			`for d in /proc/[0-9]*; do grep -qs qemu-system "$d/comm" && grep -E '^(Uid|Gid|CapEff|CapPrm):' "$d/status"; done; true`)
		return err == nil && strings.Contains(out, "CapEff"), nil
	})
	assertUnprivileged(t, "QEMU", out)
}

// assertUnprivileged checks /proc/<pid>/status lines: uid and gid 107 (real, effective,
// saved, filesystem) and no effective or permitted capability.
func assertUnprivileged(t *testing.T, who, status string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(status), "\n") {
		name, value, _ := strings.Cut(line, ":")
		fields := strings.Fields(value)
		switch name {
		case "Uid", "Gid":
			for _, id := range fields {
				if id != "107" {
					t.Errorf("%s: %s %v, want 107 throughout", who, name, fields)
				}
			}
		case "CapEff", "CapPrm":
			if len(fields) != 1 || fields[0] != "0000000000000000" {
				t.Errorf("%s: %s %v, want no capability", who, name, fields)
			}
		}
	}
	if !strings.Contains(status, "CapEff") || !strings.Contains(status, "Uid") {
		t.Errorf("%s: no status read:\n%s", who, status)
	}
}

// TestTheNodeAdvertisesTheHandlersDevices: virt-handler's device plugins registered with the
// kubelet of every node it runs on: /dev/net/tun always, /dev/kvm only where KVM is usable,
// which on this project's machines (kvm_pvm, no hardware virtualization) it is not.
func TestTheNodeAdvertisesTheHandlersDevices(t *testing.T) {
	f := framework.New(t)
	handlers, err := f.Kube.CoreV1().Pods(framework.ProjectNamespace).List(f.Context(), metav1.ListOptions{LabelSelector: "kubevirt.io=virt-handler"})
	if err != nil || len(handlers.Items) == 0 {
		t.Fatalf("virt-handler pods: %v, %v", handlers, err)
	}
	_, intel := os.Stat("/sys/module/kvm_intel")
	_, amd := os.Stat("/sys/module/kvm_amd")
	hardwareKVM := intel == nil || amd == nil
	for _, h := range handlers.Items {
		f.Eventually(time.Minute, "node "+h.Spec.NodeName+" to advertise the handler's devices", func(ctx context.Context) (bool, error) {
			node, err := f.Kube.CoreV1().Nodes().Get(ctx, h.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			tun := node.Status.Allocatable[layout.TunResource]
			_, kvm := node.Status.Allocatable[layout.KVMResource]
			t.Logf("node %s: %s=%s, %s advertised: %v", node.Name, layout.TunResource, tun.String(), layout.KVMResource, kvm)
			return tun.Value() >= 110 && kvm == hardwareKVM, nil
		})
	}
}

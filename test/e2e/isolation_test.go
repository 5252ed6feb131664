//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/apiserver"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/fakelibvirtd"
)

// signalLibvirtd sends sig to the libvirtd of a launcher pod, as any user with the namespace's
// edit role could (kubectl exec; the launcher's processes are theirs).
const signalLibvirtd = `for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = libvirtd ] && kill -%s "${p#/proc/}"; done; true`

// TestTenantsCannotStallTheNode: three tenants stop their launchers' libvirtd and a fourth
// answers virt-handler with a malformed frame; virt-handler restarts (so it dials them all
// again) and still starts a new guest as usual, marks each of the four with the reason, does
// not restart itself, and the stopped ones recover once resumed.
func TestTenantsCannotStallTheNode(t *testing.T) {
	f := framework.New(t)
	stopped := []string{"stopped-0", "stopped-1", "stopped-2"}
	hostile := "hostile"
	for _, name := range append(stopped, hostile) {
		f.CreateVM(framework.TestGuestVM(name, v1.RunStrategyAlways))
	}
	pods := map[string]*corev1.Pod{}
	for _, name := range append(stopped, hostile) {
		pods[name] = f.LauncherPod(f.WaitVMIPhase(name, v1.Running, bootTimeout))
	}
	for _, name := range stopped {
		f.Kubectl("exec", pods[name].Name, "-c", "compute", "--", "sh", "-c", fmt.Sprintf(signalLibvirtd, "STOP"))
	}
	installFakeLibvirtd(t, f, pods[hostile], fakelibvirtd.HugeString)

	f.RestartVirtHandler()
	start := time.Now()
	f.CreateVM(framework.TestGuestVM("fresh", v1.RunStrategyAlways))
	f.WaitVMIPhase("fresh", v1.Running, bootTimeout)
	t.Logf("a new guest ran %s after the handler restarted", time.Since(start).Round(time.Second))

	for _, name := range stopped {
		waitSynchronized(f, name, "LauncherUnresponsive", time.Minute)
	}
	waitSynchronized(f, hostile, "LauncherProtocolError", time.Minute)
	if vmi := f.WaitVMIPhase("fresh", v1.Running, 10*time.Second); vmi.Status.Condition(v1.VirtualMachineInstanceSynchronized) != nil {
		t.Errorf("the fresh instance is not synchronized: %+v", vmi.Status.Conditions)
	}
	handler, err := f.Kube.CoreV1().Pods(framework.ProjectNamespace).List(f.Context(), metav1.ListOptions{LabelSelector: "kubevirt.io=virt-handler"})
	if err != nil || len(handler.Items) == 0 {
		t.Fatalf("virt-handler pods: %v", err)
	}
	for _, cs := range handler.Items[0].Status.ContainerStatuses {
		if cs.RestartCount != 0 || !cs.Ready {
			t.Errorf("virt-handler container %s: %d restarts, ready %v", cs.Name, cs.RestartCount, cs.Ready)
		}
	}

	for _, name := range stopped {
		f.Kubectl("exec", pods[name].Name, "-c", "compute", "--", "sh", "-c", fmt.Sprintf(signalLibvirtd, "CONT"))
	}
	for _, name := range stopped {
		waitSynchronized(f, name, "", 3*time.Minute)
	}
}

// installFakeLibvirtd builds test/fakelibvirtd and runs it in the launcher pod, in place of
// libvirtd's socket, as a tenant could with kubectl cp and exec.
func installFakeLibvirtd(t *testing.T, f *framework.Framework, pod *corev1.Pod, mode string) {
	t.Helper()
	root, err := apiserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fakelibvirtd")
	build := exec.CommandContext(f.Context(), "go", "build", "-o", bin, "./test/fakelibvirtd/cmd")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fakelibvirtd: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	dest := layout.InPod("fakelibvirtd")
	if out, err := f.KubectlAs(f.Kubeconfig, string(data), "exec", "-i", pod.Name, "-c", "compute", "--", "sh", "-c", "cat >"+dest+" && chmod +x "+dest); err != nil {
		t.Fatalf("copy fakelibvirtd: %v\n%s", err, out)
	}
	run := fmt.Sprintf("nohup %s %s %s >%s.log 2>&1 &", dest, layout.InPod(layout.SocketRel), mode, dest)
	f.Kubectl("exec", pod.Name, "-c", "compute", "--", "sh", "-c", run)
}

// waitSynchronized waits until the instance's Synchronized condition is False with reason, or
// gone when reason is "".
func waitSynchronized(f *framework.Framework, name, reason string, timeout time.Duration) {
	what := fmt.Sprintf("VMI %s Synchronized=False %s", name, reason)
	if reason == "" {
		what = "VMI " + name + " synchronized again"
	}
	f.Eventually(timeout, what, func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := vmi.Status.Condition(v1.VirtualMachineInstanceSynchronized)
		if reason == "" {
			return c == nil, nil
		}
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == reason, nil
	})
}

// TestAGuestFloodingItsConsoleIsBounded: a guest writes three times the launcher's console log
// bound to its serial port; `kubectl logs` shows it all, to its last line, the log file in the
// pod's emptyDir takes no more disk than the bound, and the guest keeps running.
func TestAGuestFloodingItsConsoleIsBounded(t *testing.T) {
	f := framework.New(t)
	vm := framework.TestGuestVM("flood", v1.RunStrategyAlways)
	kb := vm.Spec.Template.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs += fmt.Sprintf(" vmctl.flood=%d", 3*layout.ConsoleLogMax/1024)
	f.CreateVM(vm)
	pod := f.LauncherPod(f.WaitVMIPhase("flood", v1.Running, bootTimeout))
	f.WaitConsole(f.FollowConsole(pod), "VMCTL-FLOOD-DONE", 5*time.Minute)

	// Disk use, not size: the launcher frees what it copied by punching a hole.
	out := f.Kubectl("exec", pod.Name, "-c", "compute", "--", "stat", "-c", "%b %B", layout.InPod(layout.ConsoleLogRel))
	var blocks, blockSize int
	if _, err := fmt.Sscan(out, &blocks, &blockSize); err != nil {
		t.Fatalf("console log blocks %q: %v", out, err)
	}
	// The launcher frees the log once it copied the bound; what QEMU writes meanwhile is the slack.
	if used, limit := blocks*blockSize, layout.ConsoleLogMax+256<<10; used > limit {
		t.Errorf("console.log takes %d bytes of disk after the flood, want at most %d", used, limit)
	}
	if vmi := f.WaitVMIPhase("flood", v1.Running, 10*time.Second); len(vmi.Status.ActivePods) != 1 {
		t.Errorf("the flooding guest's launcher was replaced: %v", vmi.Status.ActivePods)
	}
}

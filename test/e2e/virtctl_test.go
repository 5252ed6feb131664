//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// conflict is what a 409 from virt-api reads like through virtctl.
const conflict = "Operation cannot be fulfilled"

// expectVirtctl runs virtctl and checks it succeeded (wantErr "") or failed saying wantErr.
func expectVirtctl(t *testing.T, f *framework.Framework, wantErr string, args ...string) {
	t.Helper()
	out, err := f.Virtctl(args...)
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("virtctl %s: %v\n%s", strings.Join(args, " "), err, out)
	case wantErr != "" && (err == nil || !strings.Contains(out, wantErr)):
		t.Fatalf("virtctl %s: %v\n%s\nwant a failure saying %q", strings.Join(args, " "), err, out, wantErr)
	}
}

func runStrategy(t *testing.T, f *framework.Framework, name string) v1.VirtualMachineRunStrategy {
	t.Helper()
	vm, err := f.Virt.KubevirtV1().VirtualMachines(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := vm.Spec.EffectiveRunStrategy()
	return s
}

func waitVMI(f *framework.Framework, name string, exists bool, timeout time.Duration) *v1.VirtualMachineInstance {
	var vmi *v1.VirtualMachineInstance
	f.Eventually(timeout, fmt.Sprintf("VMI %s to exist: %v", name, exists), func(ctx context.Context) (bool, error) {
		var err error
		vmi, err = f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return !exists, nil
		}
		return exists && err == nil && vmi.DeletionTimestamp == nil, err
	})
	return vmi
}

// TestVirtctlHaltedVMStartRestartStop: a Halted VM refuses stop and restart; start makes it
// Always (202) and refuses a second start; restart replaces the instance and refuses a second
// restart while the first is pending; restart --force --grace-period=0 deletes the launcher
// pod at once; stop makes it Halted again.
func TestVirtctlHaltedVMStartRestartStop(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("halted", v1.RunStrategyHalted))
	expectVirtctl(t, f, conflict, "stop", "halted")
	expectVirtctl(t, f, conflict, "restart", "halted")

	expectVirtctl(t, f, "", "start", "halted")
	if s := runStrategy(t, f, "halted"); s != v1.RunStrategyAlways {
		t.Fatalf("after start the run strategy is %s, want Always", s)
	}
	expectVirtctl(t, f, conflict, "start", "halted")
	vmi := f.WaitVMIPhase("halted", v1.Running, bootTimeout)

	expectVirtctl(t, f, "", "restart", "halted")
	expectVirtctl(t, f, "pending", "restart", "halted")
	vmi = f.WaitNewRunningVMI("halted", vmi.UID, bootTimeout)

	pod := f.LauncherPod(vmi)
	started := time.Now()
	expectVirtctl(t, f, "", "restart", "halted", "--force", "--grace-period=0")
	f.Eventually(15*time.Second, "launcher pod "+pod.Name+" to be gone", func(ctx context.Context) (bool, error) {
		_, err := f.Kube.CoreV1().Pods(f.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	t.Logf("forced restart: old launcher pod gone after %s", time.Since(started).Round(time.Millisecond))
	vmi = f.WaitNewRunningVMI("halted", vmi.UID, bootTimeout)
	if p := f.LauncherPod(vmi); p.Name == pod.Name {
		t.Fatalf("the launcher pod was not replaced")
	}

	expectVirtctl(t, f, "", "stop", "halted")
	if s := runStrategy(t, f, "halted"); s != v1.RunStrategyHalted {
		t.Fatalf("after stop the run strategy is %s, want Halted", s)
	}
	waitVMI(f, "halted", false, 2*time.Minute)
}

// TestVirtctlOtherRunStrategies: Always and Once refuse start and stop halts them; Once
// refuses restart; Manual and RerunOnFailure start and stop by request, a second request
// while one is pending or the instance runs is refused, and a stopped Manual VM stays down.
func TestVirtctlOtherRunStrategies(t *testing.T) {
	f := framework.New(t)
	for _, s := range []v1.VirtualMachineRunStrategy{v1.RunStrategyAlways, v1.RunStrategyOnce} {
		name := strings.ToLower(string(s))
		f.CreateVM(framework.TestGuestVM(name, s))
		waitVMI(f, name, true, time.Minute)
		expectVirtctl(t, f, conflict, "start", name)
		if s == v1.RunStrategyOnce {
			expectVirtctl(t, f, conflict, "restart", name)
		}
		expectVirtctl(t, f, "", "stop", name)
		if got := runStrategy(t, f, name); got != v1.RunStrategyHalted {
			t.Fatalf("%s: after stop the run strategy is %s, want Halted", name, got)
		}
		expectVirtctl(t, f, conflict, "stop", name)
		waitVMI(f, name, false, 2*time.Minute)
	}

	f.CreateVM(framework.TestGuestVM("manual", v1.RunStrategyManual))
	time.Sleep(2 * time.Second) // the controller must not start it by itself
	waitVMI(f, "manual", false, 10*time.Second)
	expectVirtctl(t, f, conflict, "stop", "manual")
	expectVirtctl(t, f, conflict, "restart", "manual")
	expectVirtctl(t, f, "", "start", "manual")
	expectVirtctl(t, f, conflict, "start", "manual") // pending, or already running
	vmi := waitVMI(f, "manual", true, time.Minute)
	expectVirtctl(t, f, "", "stop", "manual")
	expectVirtctl(t, f, conflict, "stop", "manual")
	waitVMI(f, "manual", false, 2*time.Minute)
	time.Sleep(3 * time.Second)
	waitVMI(f, "manual", false, 10*time.Second)
	if got := runStrategy(t, f, "manual"); got != v1.RunStrategyManual {
		t.Fatalf("stop changed a Manual VM's strategy to %s", got)
	}

	f.CreateVM(framework.TestGuestVM("rerun", v1.RunStrategyRerunOnFailure))
	vmi = waitVMI(f, "rerun", true, time.Minute)
	expectVirtctl(t, f, conflict, "start", "rerun")
	expectVirtctl(t, f, "", "stop", "rerun")
	waitVMI(f, "rerun", false, 2*time.Minute)
	expectVirtctl(t, f, "", "start", "rerun")
	if next := waitVMI(f, "rerun", true, time.Minute); next.UID == vmi.UID {
		t.Fatal("start did not create a new instance")
	}
}

// TestVirtctlConsoleAndExpose: a Service exposed before the VM starts reaches the guest once
// it runs, and `virtctl console`, run while the instance is still pending, waits for it and
// shows the guest booting up to its marker.
func TestVirtctlConsoleAndExpose(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("guest", v1.RunStrategyHalted))
	expectVirtctl(t, f, "", "expose", "vm", "guest", "--name", "guest-http", "--port", "8080", "--target-port", "80")
	expectVirtctl(t, f, "", "start", "guest")

	// Attach as soon as the instance exists: virtctl console waits until it is scheduled (as
	// KubeVirt's does, up to --timeout), so the console sees the whole boot.
	waitVMI(f, "guest", true, time.Minute)
	console := f.StartConsole("guest")
	f.Eventually(bootTimeout, "virtctl console to show "+framework.GuestMarker, func(context.Context) (bool, error) {
		return strings.Contains(console.Output(), framework.GuestMarker), nil
	})
	if err := console.Close(); err != nil {
		t.Errorf("virtctl console did not end cleanly on Ctrl+]: %v\n%s", err, console.Output())
	}

	svc, err := f.Kube.CoreV1().Services(f.Namespace).Get(f.Context(), "guest-http", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s:8080/", svc.Spec.ClusterIP)
	f.Eventually(2*time.Minute, "the guest to answer on "+url, func(ctx context.Context) (bool, error) {
		body, err := get(ctx, url)
		return strings.Contains(body, "hostname=guest"), err
	})
}

// TestVirtctlRBAC: view may look but not start (403); edit may start; edit cannot get a host
// path through a VM spec, and the launcher pod its VM gets is not privileged.
func TestVirtctlRBAC(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("rbac", v1.RunStrategyHalted))
	viewer := f.UserKubeconfig("viewer", "view")
	editor := f.UserKubeconfig("editor", "edit")

	// RBAC bindings reach the authorizer's cache quickly but not instantly.
	f.Eventually(30*time.Second, "the viewer to read VMs", func(context.Context) (bool, error) {
		_, err := f.KubectlAs(viewer, "", "get", "vm", "rbac")
		return err == nil, nil
	})
	out, err := f.VirtctlAs(viewer, "start", "rbac")
	if err == nil || !strings.Contains(strings.ToLower(out), "forbidden") {
		t.Fatalf("viewer's start: %v\n%s\nwant 403 Forbidden", err, out)
	}
	if s := runStrategy(t, f, "rbac"); s != v1.RunStrategyHalted {
		t.Fatalf("the viewer's refused start changed the VM to %s", s)
	}
	f.Eventually(30*time.Second, "the editor to start the VM", func(context.Context) (bool, error) {
		out, err := f.VirtctlAs(editor, "start", "rbac")
		if err != nil {
			return false, fmt.Errorf("%v: %s", err, out)
		}
		return true, nil
	})

	// A host path through a VM spec: refused whether the client validates fields or not.
	vm := framework.TestGuestVM("hostpath", v1.RunStrategyHalted)
	raw, _ := json.Marshal(vm)
	var doc map[string]any
	_ = json.Unmarshal(raw, &doc)
	doc["apiVersion"], doc["kind"] = "kubevirt.io/v1", "VirtualMachine"
	tpl := doc["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	tpl["volumes"] = []any{map[string]any{"name": "host", "hostDisk": map[string]any{"path": "/", "type": "Disk"}}}
	raw, _ = json.Marshal(doc)
	if out, err := f.KubectlAs(editor, string(raw), "create", "-f", "-"); err == nil || !strings.Contains(out, "hostDisk") {
		t.Fatalf("kubectl create of a VM with a hostDisk volume: %v\n%s\nwant a refusal naming hostDisk", err, out)
	} else {
		t.Logf("refused as it should be: %s", strings.TrimSpace(out))
	}
	if out, err := f.KubectlAs(editor, string(raw), "create", "--validate=false", "-f", "-"); err == nil {
		t.Fatalf("kubectl create --validate=false of a VM with a hostDisk volume succeeded:\n%s", out)
	} else if !strings.Contains(out, "spec.template.spec.volumes[0]") {
		t.Fatalf("the refusal does not name the volume:\n%s", out)
	} else {
		t.Logf("refused as it should be: %s", strings.TrimSpace(out))
	}

	// The editor's started VM runs in an unprivileged launcher pod without host paths.
	vmi := waitVMI(f, "rbac", true, time.Minute)
	var podUID types.UID
	f.Eventually(time.Minute, "the launcher pod of rbac", func(ctx context.Context) (bool, error) {
		pods, err := f.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: v1.CreatedByLabel + "=" + string(vmi.UID)})
		if err != nil || len(pods.Items) == 0 {
			return false, err
		}
		p := pods.Items[0]
		podUID = p.UID
		for _, vol := range p.Spec.Volumes {
			if vol.HostPath != nil {
				t.Errorf("launcher pod has a hostPath volume %s", vol.Name)
			}
		}
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				t.Errorf("container %s of the launcher pod is privileged", c.Name)
			}
		}
		if p.Spec.HostNetwork || p.Spec.HostPID || p.Spec.HostIPC {
			t.Errorf("launcher pod shares a host namespace")
		}
		return true, nil
	})
	t.Logf("launcher pod %s checked", podUID)
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestARunningVMBootsARealGuest: spec.running true starts a real QEMU guest whose console
// shows in `kubectl logs`, and whose VMI reports the pod's address.
func TestARunningVMBootsARealGuest(t *testing.T) {
	f := framework.New(t)
	vm := framework.TestGuestVM("booted", "")
	vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr.To(true)
	f.CreateVM(vm)
	vmi := f.WaitVMIPhase("booted", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	f.WaitConsole(f.FollowConsole(pod), framework.GuestMarker+" hostname=booted", bootTimeout)
	f.WaitVMReady("booted", time.Minute)
	if out := f.Kubectl("get", "vm", "booted"); !strings.Contains(out, "Running") || !strings.Contains(out, "True") {
		t.Errorf("kubectl get vm:\n%s\nwant STATUS Running and READY True", out)
	}
	if len(vmi.Status.Interfaces) == 0 || vmi.Status.Interfaces[0].IP != pod.Status.PodIP {
		t.Errorf("VMI interfaces %+v, want the pod IP %s", vmi.Status.Interfaces, pod.Status.PodIP)
	}
	// The pod's libvirtd took the QEMU capabilities virt-handler copied in from the node's
	// probe (mode 644) and did not run QEMU to probe them again (libvirt writes its own 600).
	caps := layout.InPod(layout.CapabilitiesRel) + "/*.xml"
	if out := f.Kubectl("exec", pod.Name, "-c", "compute", "--", "sh", "-c", "stat -c '%a %U' "+caps); strings.TrimSpace(out) != "644 qemu" {
		t.Errorf("the launcher's capabilities cache %s: %q, want virt-handler's copy (644 qemu)", caps, out)
	}
}

// TestAServiceSelectingTheVMReachesTheGuest: a ClusterIP Service selecting the template's
// labels reaches the guest's HTTP server, curled from the node.
func TestAServiceSelectingTheVMReachesTheGuest(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("web", v1.RunStrategyAlways))
	svc, err := f.Kube.CoreV1().Services(f.Namespace).Create(f.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt32(80)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.WaitVMIPhase("web", v1.Running, bootTimeout)
	url := fmt.Sprintf("http://%s:8080/", svc.Spec.ClusterIP)
	f.Eventually(2*time.Minute, "the guest to answer on "+url, func(ctx context.Context) (bool, error) {
		body, err := get(ctx, url)
		return strings.Contains(body, "hostname=web"), err
	})
}

// TestGuestPoweroffEndsTheInstance: a guest that powers itself off ends its instance as
// Succeeded; runStrategy Always starts a new one, RerunOnFailure does not.
func TestGuestPoweroffEndsTheInstance(t *testing.T) {
	for _, tt := range []struct {
		strategy v1.VirtualMachineRunStrategy
		restarts bool
	}{{v1.RunStrategyAlways, true}, {v1.RunStrategyRerunOnFailure, false}} {
		t.Run(string(tt.strategy), func(t *testing.T) {
			t.Parallel()
			f := framework.New(t)
			f.CreateVM(framework.TestGuestVM("guest", tt.strategy))
			vmi := f.WaitVMIPhase("guest", v1.Running, bootTimeout)
			pod := f.LauncherPod(vmi)
			powerOffGuest(t, f, pod.Status.PodIP)
			if tt.restarts {
				f.WaitNewRunningVMI("guest", vmi.UID, bootTimeout)
				return
			}
			f.WaitVMIPhase("guest", v1.Succeeded, time.Minute)
			f.WaitVMStatus("guest", v1.VirtualMachineStatusStopped, time.Minute)
			time.Sleep(5 * time.Second)
			if got, _ := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), "guest", metav1.GetOptions{}); got == nil || got.UID != vmi.UID {
				t.Errorf("RerunOnFailure replaced an instance that shut down by itself")
			}
		})
	}
}

// TestKilledQEMUFailsTheInstance: kill -9 of QEMU is a crash: the instance is Failed, and
// RerunOnFailure starts a new one.
func TestKilledQEMUFailsTheInstance(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("crash", v1.RunStrategyRerunOnFailure))
	vmi := f.WaitVMIPhase("crash", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	f.Kubectl("exec", pod.Name, "-c", "compute", "--", "sh", "-c", "kill -9 $(pidof qemu-system-x86_64)")
	f.Eventually(time.Minute, "the instance to fail", func(ctx context.Context) (bool, error) {
		got, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, "crash", metav1.GetOptions{})
		return err == nil && (got.UID != vmi.UID || got.Status.Phase == v1.Failed), err
	})
	f.WaitNewRunningVMI("crash", vmi.UID, bootTimeout)
}

// TestDeletingAVMIShutsTheGuestDown: deleting an instance presses the ACPI power button and
// the guest powers off; a guest that ignores the button is killed after its grace period.
func TestDeletingAVMIShutsTheGuestDown(t *testing.T) {
	for _, tt := range []struct {
		name       string
		kernelArgs string
		grace      int64
		console    string
		atLeast    time.Duration
	}{
		{"acpi", "", 10, "VMCTL-GUEST-POWEROFF", 0},
		{"ignores-acpi", " vmctl.acpi=ignore", 5, "ignoring ACPI", 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := framework.New(t)
			spec := framework.TestGuestSpec(tt.name)
			spec.TerminationGracePeriodSeconds = ptr.To(tt.grace)
			spec.Domain.Firmware.KernelBoot.KernelArgs += tt.kernelArgs
			vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: tt.name}, Spec: spec}
			if _, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Create(f.Context(), vmi, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			vmi = f.WaitVMIPhase(tt.name, v1.Running, bootTimeout)
			console := f.FollowConsole(f.LauncherPod(vmi))
			f.WaitConsole(console, framework.GuestMarker, bootTimeout)

			start := time.Now()
			if err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Delete(f.Context(), tt.name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			f.Eventually(time.Minute, "the instance to be gone", func(ctx context.Context) (bool, error) {
				_, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, tt.name, metav1.GetOptions{})
				return apierrors.IsNotFound(err), nil
			})
			took := time.Since(start)
			t.Logf("%s: delete -> instance gone in %s (grace period %ds)", tt.name, took.Round(100*time.Millisecond), tt.grace)
			if !strings.Contains(console(), tt.console) {
				t.Errorf("console does not show %q:\n%s", tt.console, console())
			}
			if took < tt.atLeast {
				t.Errorf("a guest ignoring ACPI was gone after %s, before its grace period", took)
			}
		})
	}
}

// TestTheHandlerRestartsWithoutTouchingGuests: while a guest runs, virt-handler's pod is
// deleted; the new handler re-adopts the domain (no second boot) and still follows it.
func TestTheHandlerRestartsWithoutTouchingGuests(t *testing.T) {
	f := framework.New(t)
	f.CreateVM(framework.TestGuestVM("steady", v1.RunStrategyRerunOnFailure))
	vmi := f.WaitVMIPhase("steady", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	console := f.FollowConsole(pod)
	f.WaitConsole(console, framework.GuestMarker, bootTimeout)

	f.RestartVirtHandler()
	time.Sleep(3 * time.Second)
	if got := f.WaitVMIPhase("steady", v1.Running, 10*time.Second); got.UID != vmi.UID {
		t.Fatalf("the instance was replaced across the handler restart")
	}
	if n := strings.Count(console(), framework.GuestMarker); n != 1 {
		t.Errorf("the guest booted %d times, want once", n)
	}

	// The new handler follows the domain: a guest poweroff still ends the instance.
	powerOffGuest(t, f, pod.Status.PodIP)
	f.WaitVMIPhase("steady", v1.Succeeded, time.Minute)
}

// powerOffGuest asks the test guest at ip to power itself off, once it serves HTTP. The
// request is sent once: a guest that took it but answered late is already going down, and
// the instance's phase tells whether it did.
func powerOffGuest(t *testing.T, f *framework.Framework, ip string) {
	t.Helper()
	f.Eventually(bootTimeout, "the guest at "+ip+" to serve", func(ctx context.Context) (bool, error) {
		_, err := get(ctx, "http://"+ip+"/cgi-bin/uptime")
		return err == nil, err
	})
	if body, err := getWithin(f.Context(), "http://"+ip+"/cgi-bin/poweroff", 30*time.Second); err != nil || !strings.Contains(body, "powering off") {
		t.Logf("poweroff request: %q, %v (the instance's phase tells whether it went down)", body, err)
	}
}

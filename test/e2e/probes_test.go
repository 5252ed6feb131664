//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
	"github.com/vmctl/vmctl/test/testguest"
)

// TestProbesReachTheGuestThroughThePod: as in KubeVirt, httpGet and tcpSocket probes are the
// kubelet's, sent to the pod IP, which masquerade forwards to the guest. A passing readiness
// probe makes the instance Ready, a failing one keeps it not Ready (GuestNotReady), and a
// failing liveness probe ends it (the kubelet stops the compute container, whose guest gets
// its ACPI shutdown: Succeeded here, where KubeVirt says Failed).
func TestProbesReachTheGuestThroughThePod(t *testing.T) {
	f := framework.New(t)
	probed := func(name string, ready, live *v1.Probe) {
		spec := framework.TestGuestSpec(name)
		spec.ReadinessProbe, spec.LivenessProbe = ready, live
		f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	port := func(p int32) corev1.TCPSocketAction { return corev1.TCPSocketAction{Port: intstr.FromInt32(p)} }
	http80 := &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80)}
	closed := port(9) // nothing listens there in the guest
	probed("served", &v1.Probe{Handler: v1.Handler{HTTPGet: http80}, PeriodSeconds: 2}, nil)
	probed("unserved", &v1.Probe{Handler: v1.Handler{TCPSocket: &closed}, PeriodSeconds: 2}, nil)
	probed("dying", nil, &v1.Probe{Handler: v1.Handler{TCPSocket: &closed}, InitialDelaySeconds: 20, PeriodSeconds: 2, FailureThreshold: 1})

	ready := func(name string) *v1.VirtualMachineInstanceCondition {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(f.Context(), name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		for i, c := range vmi.Status.Conditions {
			if c.Type == v1.VirtualMachineInstanceReady {
				return &vmi.Status.Conditions[i]
			}
		}
		return nil
	}
	f.Eventually(3*time.Minute, "served to be Ready", func(context.Context) (bool, error) {
		c := ready("served")
		return c != nil && c.Status == corev1.ConditionTrue, nil
	})
	f.WaitVMIPhase("unserved", v1.Running, time.Minute)
	if c := ready("unserved"); c == nil || c.Status != corev1.ConditionFalse || c.Reason != "GuestNotReady" {
		t.Errorf("unserved: Ready %+v, want False (GuestNotReady)", c)
	}
	f.Eventually(3*time.Minute, "dying to end", func(ctx context.Context) (bool, error) {
		vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, "dying", metav1.GetOptions{})
		if err == nil && (vmi.Status.Phase == v1.Failed || vmi.Status.Phase == v1.Succeeded) {
			t.Logf("dying ended %s (%s)", vmi.Status.Phase, vmi.Status.Reason)
			return true, nil
		}
		return false, err
	})
}

// TestProbesThroughTheGuestAgent: as in KubeVirt, a guestAgentPing probe passes once the
// guest's agent answers, and an exec probe runs its command in the guest through the agent:
// it passes when the command exits 0. A guest without an agent never gets Ready.
func TestProbesThroughTheGuestAgent(t *testing.T) {
	f := framework.New(t)
	probed := func(name string, agent bool, ready *v1.Probe) {
		spec := framework.TestGuestSpec(name)
		if agent {
			spec = testguest.WithAgent(spec)
		}
		spec.ReadinessProbe = ready
		f.CreateVMI(&v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec})
	}
	ping := &v1.Probe{Handler: v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}}, PeriodSeconds: 2, TimeoutSeconds: 5}
	exec := func(cmd ...string) *v1.Probe {
		return &v1.Probe{Handler: v1.Handler{Exec: &corev1.ExecAction{Command: cmd}}, PeriodSeconds: 2, TimeoutSeconds: 5}
	}
	probed("pinged", true, ping)
	probed("served", true, exec("wget", "-q", "-O", "/dev/null", "http://127.0.0.1/"))
	probed("failing", true, exec("cat", "/no/such/file"))
	probed("agentless", false, ping)

	readyIs := func(name string, want corev1.ConditionStatus) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			vmi, err := f.Virt.KubevirtV1().VirtualMachineInstances(f.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil || vmi.Status.Phase != v1.Running {
				return false, err
			}
			c := vmi.Status.Condition(v1.VirtualMachineInstanceReady)
			return c != nil && c.Status == want, nil
		}
	}
	f.Eventually(bootTimeout, "pinged to be Ready", readyIs("pinged", corev1.ConditionTrue))
	f.Eventually(bootTimeout, "served to be Ready", readyIs("served", corev1.ConditionTrue))
	// Both booted as fast as these; their probes have had time to pass and did not.
	f.WaitVMIPhase("failing", v1.Running, time.Minute)
	f.WaitVMIPhase("agentless", v1.Running, time.Minute)
	time.Sleep(10 * time.Second)
	for _, name := range []string{"failing", "agentless"} {
		if ok, _ := readyIs(name, corev1.ConditionFalse)(f.Context()); !ok {
			t.Errorf("%s is Ready, or its Ready condition is not False", name)
		}
	}
}

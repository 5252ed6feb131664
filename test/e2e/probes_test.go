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

//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/test/e2e/framework"
)

// TestVMsRunInANamespaceWithResourceQuotas: a tenant namespace with a ResourceQuota on
// requests.cpu and requests.memory, which refuses any pod one of whose containers names none,
// runs a VM as it is (the VM names no CPU), and the quota counts its launcher pod. Once a
// quota counts limits too, a VM that sets its limits runs there as well, and so does one that
// sets none: its launcher gets limits, as KubeVirt's AutoResourceLimits gives them (a CPU per
// vCPU, twice the memory request).
func TestVMsRunInANamespaceWithResourceQuotas(t *testing.T) {
	f := framework.New(t)
	f.CreateQuota("requests", corev1.ResourceList{
		corev1.ResourceRequestsCPU:    resource.MustParse("2"),
		corev1.ResourceRequestsMemory: resource.MustParse("4Gi"),
	})
	f.CreateVM(framework.TestGuestVM("tenant", v1.RunStrategyAlways))
	vmi := f.WaitVMIPhase("tenant", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	f.WaitConsole(f.FollowConsole(pod), framework.GuestMarker+" hostname=tenant", bootTimeout)
	cpu := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	t.Logf("compute requests %s of CPU", cpu.String())
	f.Eventually(time.Minute, "the quota to count the launcher pod", func(ctx context.Context) (bool, error) {
		q, err := f.Kube.CoreV1().ResourceQuotas(f.Namespace).Get(ctx, "requests", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used := q.Status.Used[corev1.ResourceRequestsCPU]
		return !cpu.IsZero() && used.Cmp(cpu) >= 0, nil
	})

	f.CreateQuota("limits", corev1.ResourceList{
		corev1.ResourceLimitsCPU:    resource.MustParse("4"),
		corev1.ResourceLimitsMemory: resource.MustParse("4Gi"),
	})
	limited := framework.TestGuestVM("limited", v1.RunStrategyAlways)
	limited.Spec.Template.Spec.Domain.Resources.Limits = corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("1"),
		corev1.ResourceMemory: resource.MustParse("512Mi"),
	}
	f.CreateVM(limited)
	f.WaitVMIPhase("limited", v1.Running, bootTimeout)

	f.CreateVM(framework.TestGuestVM("unlimited", v1.RunStrategyAlways))
	unlimited := f.LauncherPod(f.WaitVMIPhase("unlimited", v1.Running, bootTimeout))
	f.WaitConsole(f.FollowConsole(unlimited), framework.GuestMarker+" hostname=unlimited", bootTimeout)
	compute := unlimited.Spec.Containers[0].Resources
	wantMemory := resource.NewQuantity(2*compute.Requests.Memory().Value(), resource.BinarySI)
	if compute.Limits.Cpu().Cmp(resource.MustParse("1")) != 0 || compute.Limits.Memory().Cmp(*wantMemory) != 0 {
		t.Errorf("compute of a one-vCPU VM without limits: limits %v, want cpu 1 and memory %s", compute.Limits, wantMemory)
	}
}

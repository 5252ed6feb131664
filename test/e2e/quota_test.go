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

// TestAVMRunsInANamespaceWhoseQuotaCountsRequests: a tenant namespace with a ResourceQuota on
// requests.cpu and requests.memory, which refuses any pod one of whose containers names none,
// runs a VM as it is (the VM names no CPU), and the quota counts its launcher pod.
func TestAVMRunsInANamespaceWhoseQuotaCountsRequests(t *testing.T) {
	f := framework.New(t)
	quotas := f.Kube.CoreV1().ResourceQuotas(f.Namespace)
	_, err := quotas.Create(f.Context(), &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "tenant"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourceRequestsCPU:    resource.MustParse("2"),
			corev1.ResourceRequestsMemory: resource.MustParse("4Gi"),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the quota: %v", err)
	}
	// Until the quota controller has computed its status, the quota refuses every pod.
	f.Eventually(time.Minute, "the quota's status", func(ctx context.Context) (bool, error) {
		q, err := quotas.Get(ctx, "tenant", metav1.GetOptions{})
		return err == nil && len(q.Status.Hard) == 2, err
	})

	f.CreateVM(framework.TestGuestVM("tenant", v1.RunStrategyAlways))
	vmi := f.WaitVMIPhase("tenant", v1.Running, bootTimeout)
	pod := f.LauncherPod(vmi)
	f.WaitConsole(f.FollowConsole(pod), framework.GuestMarker+" hostname=tenant", time.Minute)

	cpu := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
	t.Logf("compute requests %s of CPU", cpu.String())
	f.Eventually(time.Minute, "the quota to count the launcher pod", func(ctx context.Context) (bool, error) {
		q, err := quotas.Get(ctx, "tenant", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		used := q.Status.Used[corev1.ResourceRequestsCPU]
		return !cpu.IsZero() && used.Cmp(cpu) >= 0, nil
	})
}

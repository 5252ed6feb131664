package permissions

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler"
	"github.com/vmctl/vmctl/test/apiserver"
)

// TestVirtHandlerBeatsOnlyOnItsNode: virt-handler's heartbeat, as it sends it, passes on its own
// node; the same token may not patch another node, nor touch any other label, annotation or
// the spec of its own.
func TestVirtHandlerBeatsOnlyOnItsNode(t *testing.T) {
	ctx := context.Background()
	for _, node := range []string{"beat-a", "beat-b"} {
		if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node,
			Labels: map[string]string{"role": "worker"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nodes := kubernetes.NewForConfigOrDie(tokenConfig(handlerToken(t, "beat-a"))).CoreV1().Nodes()
	beat := func(node string) error {
		return (&handler.Heartbeat{Nodes: nodes, NodeName: node, Interval: 10 * time.Second,
			Ready: func() error { return nil }, Clock: clocktesting.NewFakePassiveClock(time.Now())}).Beat(ctx)
	}
	refusal := `virt-handler of node beat-a may write only that node, not node "beat-b"`
	err := apiserver.UntilRefused(ctx, refusal, func() error { return beat("beat-b") })
	expectRefused(t, "heartbeat on another node", err, refusal)

	if err := beat("beat-a"); err != nil {
		t.Fatalf("heartbeat on its own node: %v", err)
	}
	got, err := kube.CoreV1().Nodes().Get(ctx, "beat-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.SchedulableLabel] != "true" || got.Annotations[v1.HeartbeatAnnotation] == "" {
		t.Errorf("after a heartbeat: labels %v, annotations %v", got.Labels, got.Annotations)
	}

	for _, tc := range []struct{ what, patch string }{
		{"another label", `{"metadata":{"labels":{"role":"gpu"}}}`},
		{"a removed label", `{"metadata":{"labels":{"role":null}}}`},
		{"another annotation", `{"metadata":{"annotations":{"note":"x"}}}`},
		{"a taint", `{"spec":{"taints":[{"key":"k","effect":"NoSchedule"}]}}`},
		{"cordoning", `{"spec":{"unschedulable":true}}`},
	} {
		_, err := nodes.Patch(ctx, "beat-a", types.MergePatchType, []byte(tc.patch), metav1.PatchOptions{})
		expectRefused(t, tc.what, err, "virt-handler may")
	}
}

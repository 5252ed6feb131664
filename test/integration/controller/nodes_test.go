package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	nodecontroller "github.com/vmctl/vmctl/controller/node"
)

// TestSilentHandlersNodesTakeNoInstances: virt-controller withdraws kubevirt.io/schedulable
// from a node once its handler's heartbeat is older than the timeout (at once for a long-silent
// one, when the timeout passes for one that just went quiet), and leaves a beating node and a
// node that never had a handler alone.
func TestSilentHandlersNodesTakeNoInstances(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	// going-quiet's heartbeat times out quietFor from now (less the second RFC 3339 drops).
	const quietFor = 20 * time.Second
	beat := func(ago time.Duration) map[string]string {
		return map[string]string{v1.HeartbeatAnnotation: now.Add(-ago).UTC().Format(time.RFC3339)}
	}
	for name, annotations := range map[string]map[string]string{
		"long-silent": beat(10 * time.Minute),
		"going-quiet": beat(nodecontroller.DefaultHeartbeatTimeout - quietFor),
		"beating":     beat(0),
		"no-handler":  nil,
	} {
		if _, err := kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{v1.SchedulableLabel: "true"}, Annotations: annotations}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}) })
	}
	schedulable := func(ctx context.Context, name string) string {
		n, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "error: " + err.Error()
		}
		return n.Labels[v1.SchedulableLabel]
	}
	eventually(t, 10*time.Second, "long-silent withdrawn", func(ctx context.Context) (bool, error) {
		return schedulable(ctx, "long-silent") == "false", nil
	})
	if got := schedulable(ctx, "going-quiet"); got != "true" && time.Since(now) < quietFor-time.Second {
		t.Errorf("going-quiet withdrawn before its timeout: %q", got)
	}
	eventually(t, quietFor+15*time.Second, "going-quiet withdrawn once its timeout passed", func(ctx context.Context) (bool, error) {
		return schedulable(ctx, "going-quiet") == "false", nil
	})
	for _, name := range []string{"beating", "no-handler"} {
		if got := schedulable(ctx, name); got != "true" {
			t.Errorf("%s: schedulable %q, want it left true", name, got)
		}
	}
}

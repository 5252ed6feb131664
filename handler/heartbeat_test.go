package handler

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestHeartbeatMarksTheNode(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name            string
		ready           error
		wantSchedulable string
	}{
		{"ready handler", nil, "true"},
		{"caches not synced", errors.New("caches not synced yet"), "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a",
				Labels: map[string]string{"other": "kept"}}})
			h := &Heartbeat{Nodes: kube.CoreV1().Nodes(), NodeName: "node-a", Interval: time.Second,
				Ready: func() error { return tc.ready }, Clock: clocktesting.NewFakePassiveClock(now)}
			if err := h.Beat(context.Background()); err != nil {
				t.Fatal(err)
			}
			node, err := kube.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := node.Labels[v1.SchedulableLabel]; got != tc.wantSchedulable {
				t.Errorf("%s = %q, want %q", v1.SchedulableLabel, got, tc.wantSchedulable)
			}
			if got := node.Annotations[v1.HeartbeatAnnotation]; got != "2026-11-26T12:00:00Z" {
				t.Errorf("%s = %q", v1.HeartbeatAnnotation, got)
			}
			if node.Labels["other"] != "kept" {
				t.Errorf("other labels lost: %v", node.Labels)
			}
		})
	}
}

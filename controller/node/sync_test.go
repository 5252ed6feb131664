package node

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestSyncWithdrawsSilentNodes(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	beatAt := func(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339) }
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        string // the schedulable label after the sync
		wantEvent   bool
	}{
		{"fresh heartbeat", schedulable("true"), heartbeat(beatAt(5 * time.Second)), "true", false},
		{"stale heartbeat", schedulable("true"), heartbeat(beatAt(time.Minute)), "false", true},
		{"garbled heartbeat", schedulable("true"), heartbeat("yesterday"), "false", true},
		{"already withdrawn", schedulable("false"), heartbeat(beatAt(time.Hour)), "false", false},
		{"never had a handler (kwok)", schedulable("true"), nil, "true", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: tc.labels, Annotations: tc.annotations}}
			kube := fake.NewClientset(node)
			factory := kubeinformers.NewSharedInformerFactory(kube, 0)
			recorder := record.NewFakeRecorder(10)
			c, err := New(kube, factory.Core().V1().Nodes(), recorder, 40*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			c.clock = clocktesting.NewFakePassiveClock(now)
			if err := factory.Core().V1().Nodes().Informer().GetIndexer().Add(node); err != nil {
				t.Fatal(err)
			}
			if err := c.sync(context.Background(), "node-a"); err != nil {
				t.Fatal(err)
			}
			got, err := kube.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Labels[v1.SchedulableLabel] != tc.want {
				t.Errorf("schedulable = %q, want %q", got.Labels[v1.SchedulableLabel], tc.want)
			}
			if gotEvent := len(recorder.Events) > 0; gotEvent != tc.wantEvent {
				t.Errorf("event recorded: %v, want %v", gotEvent, tc.wantEvent)
			}
		})
	}
}

func schedulable(v string) map[string]string { return map[string]string{v1.SchedulableLabel: v} }
func heartbeat(at string) map[string]string  { return map[string]string{v1.HeartbeatAnnotation: at} }

package manager

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A replica asked to stop keeps the Lease until its controllers have returned, then releases
// it: a successor never reconciles beside the last syncs of the old leader.
func TestTheLeaseIsReleasedOnlyAfterTheControllersStopped(t *testing.T) {
	kube := fake.NewClientset()
	holder := func() string {
		lease, err := kube.CoordinationV1().Leases("kubevirt").Get(context.Background(), LeaseName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	ctx, stop := context.WithCancel(context.Background())
	leading := make(chan struct{})
	holderWhileStopping := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- runElected(ctx, kube, Election{Namespace: "kubevirt", Identity: "replica-a"}, func(ctx context.Context) error {
			close(leading)
			<-ctx.Done()
			time.Sleep(200 * time.Millisecond) // the last syncs, still writing
			holderWhileStopping <- holder()
			return nil
		})
	}()
	select {
	case <-leading:
	case <-time.After(30 * time.Second):
		t.Fatal("never led")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("runElected: %v", err)
	}
	if h := <-holderWhileStopping; h != "replica-a" {
		t.Errorf("Lease held by %q while the controllers were stopping, want replica-a", h)
	}
	if h := holder(); h != "" {
		t.Errorf("Lease held by %q after the stop, want released", h)
	}
}

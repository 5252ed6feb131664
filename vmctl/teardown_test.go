package vmctl

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
)

func TestTeardown(t *testing.T) {
	other := testPod()
	other.UID = "another-pod"
	tests := []struct {
		name        string
		ours        bool
		wantDeleted bool
	}{
		{name: "our clone is deleted", ours: true, wantDeleted: true},
		{name: "another pod's clone is left", ours: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owner := testPod()
			if !tt.ours {
				owner = other
			}
			clone, err := Clone(testPrototype(), owner, "apps", nil)
			if err != nil {
				t.Fatal(err)
			}
			client := fake.NewSimpleClientset(clone)
			if err := teardown(context.Background(), client, record.NewFakeRecorder(5), testPod(), "apps", clone.Name, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			_, err = client.KubevirtV1().VirtualMachines("apps").Get(context.Background(), clone.Name, metav1.GetOptions{})
			if deleted := apierrors.IsNotFound(err); deleted != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v", deleted, tt.wantDeleted)
			}
		})
	}
	// Nothing to delete is a clean exit.
	if err := teardown(context.Background(), fake.NewSimpleClientset(), record.NewFakeRecorder(5), testPod(), "apps", "none", time.Second); err != nil {
		t.Errorf("teardown without a clone: %v", err)
	}
}

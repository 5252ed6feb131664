package virtctl

import (
	"context"
	"maps"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned/fake"
)

// An instance's node label is none of its launcher pods' (and moves with a migration): a
// Service selecting it would reach no pod.
func TestExposeAnInstanceLeavesOutItsNodeLabel(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns",
		Labels: map[string]string{"app": "web", v1.NodeNameLabel: "node-a"}}}
	c := &clients{Namespace: "ns", Virt: fake.NewSimpleClientset(vmi)}
	labels, err := exposedLabels(context.Background(), c, "vmi", "web")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"app": "web"}; !maps.Equal(labels, want) {
		t.Errorf("selector labels %v, want %v", labels, want)
	}
}

package api

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/vmistatus"
)

// TestStatusWritesLeaveTheSpecAsTheUserWroteIt: the instance's status is no subresource; the
// components write it with a JSON patch, so a spec field the user set to its zero value, which
// the Go types would drop on an update, stays; the node label goes with the node; and a status
// computed from an old copy is refused with a conflict, as an update would be.
func TestStatusWritesLeaveTheSpecAsTheUserWroteIt(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t)
	manifest := `{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"zero"},
		"spec":{"domain":{"resources":{"requests":{"memory":"64Mi"}},
		"devices":{"disks":[{"name":"root","disk":{"bus":"virtio","readonly":false}}]}},
		"volumes":[{"name":"root","containerDisk":{"image":"example/disk"}}]}}`
	rest := virt.KubevirtV1().RESTClient()
	if err := rest.Post().Namespace(ns).Resource("virtualmachineinstances").Body([]byte(manifest)).Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
	vmis := virt.KubevirtV1().VirtualMachineInstances(ns)
	read, err := vmis.Get(ctx, "zero", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	scheduled := read.DeepCopy()
	scheduled.Status.Phase, scheduled.Status.NodeName = v1.Scheduled, "node-a"
	scheduled.Labels = map[string]string{v1.NodeNameLabel: "node-a"}
	written, err := vmistatus.Write(ctx, vmis, scheduled, true)
	if err != nil {
		t.Fatalf("status write: %v", err)
	}
	if written.Status.Phase != v1.Scheduled || written.Status.NodeName != "node-a" || written.Labels[v1.NodeNameLabel] != "node-a" {
		t.Errorf("stored phase %q node %q label %q, want Scheduled on node-a, labelled", written.Status.Phase, written.Status.NodeName, written.Labels[v1.NodeNameLabel])
	}
	raw, err := rest.Get().Namespace(ns).Resource("virtualmachineinstances").Name("zero").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"readonly":false`) {
		t.Errorf("the spec lost the user's readonly: false: %s", raw)
	}

	stale := read.DeepCopy()
	stale.Status.Phase = v1.Failed
	if _, err := vmistatus.Write(ctx, vmis, stale, false); !apierrors.IsConflict(err) {
		t.Errorf("status computed from an old copy: %v, want a conflict", err)
	}
}

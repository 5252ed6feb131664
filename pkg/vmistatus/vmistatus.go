// Package vmistatus writes an instance's status. The status is no subresource (as in
// KubeVirt), and an update would send the spec as well, re-encoded from the writer's Go types:
// a field the user set to its zero value (`readonly: false`) would come back without it, a
// change of spec that virt-handler's node restriction refuses and that would run the
// admission webhooks again. A JSON patch replaces the status (and, for virt-controller, the
// labels) and nothing else, at the resourceVersion the status was computed from, so a writer
// that computed from an old copy gets a conflict as an update would.
package vmistatus

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	typedv1 "github.com/vmctl/vmctl/client/clientset/versioned/typed/kubevirt/v1"
)

type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Write replaces the stored status of vmi with vmi's; withLabels replaces its labels too
// (virt-controller's kubevirt.io/nodeName goes with the node it names).
func Write(ctx context.Context, vmis typedv1.VirtualMachineInstanceInterface, vmi *v1.VirtualMachineInstance, withLabels bool) (*v1.VirtualMachineInstance, error) {
	ops := []op{{"replace", "/metadata/resourceVersion", vmi.ResourceVersion}}
	if withLabels {
		ops = append(ops, op{"add", "/metadata/labels", vmi.Labels})
	}
	ops = append(ops, op{"add", "/status", vmi.Status})
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return vmis.Patch(ctx, vmi.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
}

package controller

import (
	"context"
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/client/clientset/versioned"
)

// PatchInstanceOwners replaces an instance's owner references, to adopt or release it. It is
// a merge patch (custom resources take no strategic merge patches) carrying the instance's
// uid as a precondition: it fails if the instance was replaced meanwhile.
func PatchInstanceOwners(ctx context.Context, virt versioned.Interface, vmi *v1.VirtualMachineInstance, refs []metav1.OwnerReference) (*v1.VirtualMachineInstance, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs, "uid": vmi.UID}})
	if err != nil {
		return nil, err
	}
	return virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
}

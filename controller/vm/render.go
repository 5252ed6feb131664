package vm

import (
	"maps"

	"github.com/google/uuid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// renderInstance is the instance a VirtualMachine runs: its template, under the
// VirtualMachine's name, controlled by it.
func renderInstance(vm *v1.VirtualMachine) *v1.VirtualMachineInstance {
	tmpl := vm.Spec.Template
	return &v1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{
			Name:            vm.Name,
			Namespace:       vm.Namespace,
			Labels:          maps.Clone(tmpl.ObjectMeta.Labels),
			Annotations:     maps.Clone(tmpl.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{*ownerRef(vm)},
			// Set at creation so the instance controller need not write it.
			Finalizers: []string{v1.VirtualMachineInstanceFinalizer},
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
}

// newUUID is a random (version 4) UUID: unique across VMs, whatever their names.
func newUUID() types.UID { return types.UID(uuid.NewString()) }

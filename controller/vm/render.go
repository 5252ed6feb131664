package vm

import (
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
)

// renderInstance is the instance a VirtualMachine runs: its template, under the
// VirtualMachine's name, controlled by it.
func renderInstance(vm *v1.VirtualMachine) *v1.VirtualMachineInstance {
	vmi := controller.NewInstance(vm.Spec.Template, vm.Namespace, ownerRef(vm))
	vmi.Name = vm.Name
	return vmi
}

// newUUID is a random (version 4) UUID: unique across VMs, whatever their names.
func newUUID() types.UID { return types.UID(uuid.NewString()) }

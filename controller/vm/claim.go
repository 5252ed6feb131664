package vm

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
)

// errForeignOwner: the instance of the VirtualMachine's name belongs to something else. Only
// that owner can resolve it, and the instance's events re-enqueue the VirtualMachine.
var errForeignOwner = errors.New("instance not controlled by this virtual machine")

// claimInstance returns the instance of the VirtualMachine's name when the VirtualMachine owns
// it, adopting it first when it has no owner (left by an orphaning delete). An unowned
// instance that is already terminating is returned unadopted: it still fences a new start.
func (c *Controller) claimInstance(ctx context.Context, vm *v1.VirtualMachine) (*v1.VirtualMachineInstance, error) {
	vmi, err := c.vmiLister.VirtualMachineInstances(vm.Namespace).Get(vm.Name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ref := metav1.GetControllerOf(vmi)
	switch {
	case ref != nil && ref.UID == vm.UID:
		return vmi, nil
	case ref != nil:
		return nil, fmt.Errorf("%w: virtual machine instance %s is controlled by %s %s", errForeignOwner, vmi.Name, ref.Kind, ref.Name)
	case vmi.DeletionTimestamp != nil || vm.DeletionTimestamp != nil:
		return vmi, nil
	}
	return c.adopt(ctx, vm, vmi)
}

// adopt makes the VirtualMachine the instance's controller. It first re-reads the
// VirtualMachine from the API server, not the cache: a VirtualMachine deleted and recreated
// under the same name must not adopt on behalf of its predecessor.
func (c *Controller) adopt(ctx context.Context, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) (*v1.VirtualMachineInstance, error) {
	fresh, err := c.virt.KubevirtV1().VirtualMachines(vm.Namespace).Get(ctx, vm.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if fresh.UID != vm.UID || fresh.DeletionTimestamp != nil {
		return nil, fmt.Errorf("virtual machine %s changed while adopting its instance", vm.Name)
	}
	refs := append(vmi.OwnerReferences[:len(vmi.OwnerReferences):len(vmi.OwnerReferences)], *ownerRef(vm))
	return controller.PatchInstanceOwners(ctx, c.virt, vmi, refs)
}

// ownerRef is the controller reference a VirtualMachine puts on its instance.
func ownerRef(vm *v1.VirtualMachine) *metav1.OwnerReference {
	return controller.BlockingControllerRef(vm, vmKind)
}

package replicaset

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
)

// claimInstances reconciles ownership with the selector and returns the instances the replica
// set controls afterwards: its own that still match, plus matching orphans it adopted. Its own
// that no longer match are released, so a user can take an instance out of the set by
// relabelling it. Instances of other owners are never touched.
func (c *Controller) claimInstances(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet, selector labels.Selector,
	vmis []*v1.VirtualMachineInstance) ([]*v1.VirtualMachineInstance, error) {
	var claimed []*v1.VirtualMachineInstance
	var errs []error
	var recheckErr error
	rechecked := false
	for _, vmi := range vmis {
		matches := selector.Matches(labels.Set(vmi.Labels))
		ref := metav1.GetControllerOf(vmi)
		switch {
		case ref != nil && ref.UID == rs.UID && matches:
			claimed = append(claimed, vmi)
		case ref != nil && ref.UID == rs.UID:
			if err := c.release(ctx, rs, vmi); err != nil {
				errs = append(errs, err)
			}
		case ref != nil || !matches || vmi.DeletionTimestamp != nil:
			// Another owner's, not selected, or terminating: adopting it would not help.
		default:
			// One uncached read per sync, and only when there is something to adopt.
			if !rechecked {
				rechecked = true
				if recheckErr = c.recheck(ctx, rs); recheckErr != nil {
					errs = append(errs, recheckErr)
				}
			}
			if recheckErr != nil {
				continue
			}
			adopted, err := c.adopt(ctx, rs, vmi)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if adopted != nil {
				claimed = append(claimed, adopted)
			}
		}
	}
	return claimed, errors.Join(errs...)
}

// recheck reads the replica set from the API server, not the cache: one deleted, or deleted
// and recreated under the same name, must not adopt on behalf of its predecessor.
func (c *Controller) recheck(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet) error {
	fresh, err := c.virt.KubevirtV1().VirtualMachineInstanceReplicaSets(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("rechecking replica set %s before adopting: %w", rs.Name, err)
	}
	if fresh.UID != rs.UID {
		return fmt.Errorf("replica set %s was replaced (uid %s, expected %s): not adopting", rs.Name, fresh.UID, rs.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("replica set %s is being deleted: not adopting", rs.Name)
	}
	return nil
}

// adopt makes the replica set the orphan's controller. A nil result means the instance is gone.
func (c *Controller) adopt(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet, vmi *v1.VirtualMachineInstance) (*v1.VirtualMachineInstance, error) {
	refs := append(vmi.OwnerReferences[:len(vmi.OwnerReferences):len(vmi.OwnerReferences)], *ownerRef(rs))
	adopted, err := c.patchOwners(ctx, vmi, refs)
	if err != nil {
		return nil, fmt.Errorf("adopting virtual machine instance %s: %w", vmi.Name, err)
	}
	logger(ctx, rs).V(2).Info("Adopted virtual machine instance", "vmi", vmi.Name)
	return adopted, nil
}

// release removes the replica set's reference from an instance it no longer selects.
func (c *Controller) release(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet, vmi *v1.VirtualMachineInstance) error {
	refs := make([]metav1.OwnerReference, 0, len(vmi.OwnerReferences))
	for _, ref := range vmi.OwnerReferences {
		if ref.UID != rs.UID {
			refs = append(refs, ref)
		}
	}
	if _, err := c.patchOwners(ctx, vmi, refs); err != nil {
		return fmt.Errorf("releasing virtual machine instance %s: %w", vmi.Name, err)
	}
	logger(ctx, rs).V(2).Info("Released virtual machine instance", "vmi", vmi.Name)
	return nil
}

// patchOwners replaces the instance's owner references; an instance already gone is no error.
func (c *Controller) patchOwners(ctx context.Context, vmi *v1.VirtualMachineInstance, refs []metav1.OwnerReference) (*v1.VirtualMachineInstance, error) {
	patched, err := controller.PatchInstanceOwners(ctx, c.virt, vmi, refs)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return patched, err
}

// ownerRef is the controller reference a replica set puts on its instances.
func ownerRef(rs *v1.VirtualMachineInstanceReplicaSet) *metav1.OwnerReference {
	return controller.BlockingControllerRef(rs, rsKind)
}

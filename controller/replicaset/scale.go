package replicaset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/controller"
)

// replicaError is a failed creation or deletion, with the reason the ReplicaFailure
// condition reports.
type replicaError struct {
	reason string
	err    error
}

func (e *replicaError) Error() string { return e.err.Error() }
func (e *replicaError) Unwrap() error { return e.err }

// createInstances creates n instances in slow-start batches. The expectations are raised
// first, so that no sync under informer lag creates again; creations that failed or were
// never attempted will never be observed, so they are lowered again.
func (c *Controller) createInstances(ctx context.Context, key string, rs *v1.VirtualMachineInstanceReplicaSet, n int) error {
	c.expectations.ExpectCreations(key, n)
	created, err := slowStart(n, func() error { return c.createInstance(ctx, rs) })
	for range n - created {
		c.expectations.CreationObserved(key)
	}
	return err
}

func (c *Controller) createInstance(ctx context.Context, rs *v1.VirtualMachineInstanceReplicaSet) error {
	created, err := c.virt.KubevirtV1().VirtualMachineInstances(rs.Namespace).Create(ctx, renderInstance(rs), metav1.CreateOptions{})
	if controller.NamespaceTerminating(err) {
		return err // no event: the replica set goes with its namespace
	}
	if err != nil {
		c.recorder.Eventf(rs, corev1.EventTypeWarning, FailedCreate, "Error creating virtual machine instance: %v", err)
		return &replicaError{reason: FailedCreate, err: fmt.Errorf("creating virtual machine instance: %w", err)}
	}
	c.recorder.Eventf(rs, corev1.EventTypeNormal, SuccessfulCreate, "Created virtual machine instance %s", created.Name)
	return nil
}

// slowStart calls fn count times in batches of 1, 2, 4, ... run concurrently, and stops
// after the first batch with an error: when every call fails alike (quota, admission), only
// a few fail rather than count. It returns how many calls succeeded and the first error.
func slowStart(count int, fn func() error) (int, error) {
	succeeded := 0
	for batch := min(count, 1); count > 0; batch = min(2*batch, count) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() {
				if err := fn(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		succeeded += batch - len(errs)
		if len(errs) > 0 {
			return succeeded, <-errs
		}
		count -= batch
	}
	return succeeded, nil
}

// deleteInstances deletes the instances concurrently, each under an expectation on its UID
// and with the UID as a precondition, so a namesake created meanwhile is never deleted.
func (c *Controller) deleteInstances(ctx context.Context, key string, rs *v1.VirtualMachineInstanceReplicaSet, vmis []*v1.VirtualMachineInstance) error {
	uids := make([]types.UID, 0, len(vmis))
	for _, vmi := range vmis {
		uids = append(uids, vmi.UID)
	}
	c.expectations.ExpectDeletions(key, uids...)
	errs := make(chan error, len(vmis))
	var wg sync.WaitGroup
	for _, vmi := range vmis {
		wg.Go(func() {
			if err := c.deleteInstance(ctx, key, rs, vmi); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

func (c *Controller) deleteInstance(ctx context.Context, key string, rs *v1.VirtualMachineInstanceReplicaSet, vmi *v1.VirtualMachineInstance) error {
	err := c.virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(vmi.UID)}})
	if err != nil {
		// Not deleted by us: no informer event will lower the expectation.
		c.expectations.DeletionObserved(key, vmi.UID)
		if apierrors.IsNotFound(err) {
			return nil
		}
		c.recorder.Eventf(rs, corev1.EventTypeWarning, FailedDelete, "Error deleting virtual machine instance %s: %v", vmi.Name, err)
		return &replicaError{reason: FailedDelete, err: fmt.Errorf("deleting virtual machine instance %s: %w", vmi.Name, err)}
	}
	c.recorder.Eventf(rs, corev1.EventTypeNormal, SuccessfulDelete, "Deleted virtual machine instance %s", vmi.Name)
	return nil
}

// surplus picks the n active instances to delete: the least far along first, so the fewest
// running guests are lost; then those not Ready; then the newest, which have served least.
func surplus(active []*v1.VirtualMachineInstance, n int) []*v1.VirtualMachineInstance {
	sorted := slices.Clone(active)
	slices.SortStableFunc(sorted, func(a, b *v1.VirtualMachineInstance) int {
		if d := phaseRank(a.Status.Phase) - phaseRank(b.Status.Phase); d != 0 {
			return d
		}
		if ra, rb := isReady(a), isReady(b); ra != rb {
			if !ra {
				return -1
			}
			return 1
		}
		if d := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); d != 0 {
			return d
		}
		return strings.Compare(b.Name, a.Name)
	})
	return sorted[:n]
}

// phaseRank orders phases by how far along an instance is: one not yet running costs least
// to delete. Unknown (node unreachable) still ranks before Running, as in the ReplicaSet
// controller, since its guest may already be lost.
func phaseRank(p v1.VirtualMachineInstancePhase) int {
	switch p {
	case v1.VmPhaseUnset:
		return 0
	case v1.Pending:
		return 1
	case v1.Scheduling:
		return 2
	case v1.Scheduled:
		return 3
	case v1.Unknown:
		return 4
	default:
		return 5
	}
}

// isReady reports whether the instance's Ready condition is True.
func isReady(vmi *v1.VirtualMachineInstance) bool {
	for _, cond := range vmi.Status.Conditions {
		if cond.Type == v1.VirtualMachineInstanceReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

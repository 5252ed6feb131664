package vmctl

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/client/clientset/versioned"
)

// ReasonCloneDeleted is recorded on the pod when vmctl removes its clone on SIGTERM.
const ReasonCloneDeleted = "CloneDeleted"

// teardown deletes pod's clone and waits until it is gone. The delete is foreground, so the VM
// stays in the API until its instance (and so the guest) is gone: its disappearance is the
// signal the guest has stopped. The UID precondition keeps a clone of the same name that is
// not ours (or a newer one) safe. When the grace period runs out first, vmctl still exits 0:
// the deletion goes on without it, and the ownerReference covers the rest.
func teardown(ctx context.Context, virt versioned.Interface, recorder record.EventRecorder, pod *corev1.Pod, namespace, name string, timeout time.Duration) error {
	log := klog.FromContext(ctx).WithValues("clone", klog.KRef(namespace, name))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vms := virt.KubevirtV1().VirtualMachines(namespace)

	vm, err := vms.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		log.Info("terminating; there is no clone to delete")
		return nil
	}
	if err != nil {
		return err
	}
	if !OwnedBy(vm, pod) {
		log.Info("terminating; the VirtualMachine of that name is not this pod's, leaving it")
		return nil
	}
	start := time.Now()
	err = vms.Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
		Preconditions:     &metav1.Preconditions{UID: &vm.UID},
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return err
	}
	log.Info("terminating: deleted the clone, waiting for its instance to go", "timeout", timeout)
	recorder.Eventf(pod, corev1.EventTypeNormal, ReasonCloneDeleted, "Deleted VirtualMachine %s/%s", namespace, name)
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := vms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && got.UID != vm.UID, nil
	})
	if err != nil {
		log.Info("the clone is still terminating at the end of the grace period; the deletion goes on without vmctl", "waited", time.Since(start).Round(time.Millisecond))
		return nil
	}
	log.Info("the clone and its instance are gone", "took", time.Since(start).Round(time.Millisecond))
	return nil
}

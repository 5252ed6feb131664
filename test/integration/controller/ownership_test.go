package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestOrphanDeleteAndAdoption: `kubectl delete vm --cascade=orphan` leaves the instance
// running, unowned, with its launcher pod; a new VM of the same name adopts it instead of
// starting a second one.
func TestOrphanDeleteAndAdoption(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	created := recordVMIs(t, ns)
	vm := createVM(t, ns, "orphan", v1.RunStrategyAlways)
	vmi := waitRunning(t, vm)
	pods := launcherPods(t, vmi)
	if len(pods) != 1 {
		t.Fatalf("want one launcher pod, got %s", describePods(pods))
	}
	pod := pods[0]

	err := virt.KubevirtV1().VirtualMachines(ns).Delete(t.Context(), vm.Name,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})
	must(t, err)
	eventually(t, timeout, "the VM to be gone", vmGone(ns, vm.Name))
	orphaned := func(ctx context.Context) (bool, error) {
		got, err := getVMI(ctx, ns, vm.Name)
		if err != nil {
			return false, err
		}
		if got.UID != vmi.UID || got.Status.Phase != v1.Running || got.DeletionTimestamp != nil {
			return false, fmt.Errorf("instance %s phase %s deleting=%v, want %s Running", got.UID, got.Status.Phase, got.DeletionTimestamp != nil, vmi.UID)
		}
		if ref := metav1.GetControllerOf(got); ref != nil {
			return false, fmt.Errorf("instance still controlled by %s %s (%s)", ref.Kind, ref.Name, ref.UID)
		}
		return true, nil
	}
	eventually(t, timeout, "the instance running without a controller", orphaned)
	consistently(t, time.Second, "the orphaned instance to keep running", orphaned)
	for _, p := range launcherPods(t, vmi) {
		if p.UID != pod.UID || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			t.Errorf("launcher pod after the orphaning delete: %s, want %s untouched", describePods([]corev1.Pod{p}), pod.Name)
		}
	}

	adopter := createVM(t, ns, "orphan", v1.RunStrategyAlways)
	eventually(t, timeout, "the new VM to adopt the instance", func(ctx context.Context) (bool, error) {
		got, err := getVMI(ctx, ns, vm.Name)
		if err != nil {
			return false, err
		}
		ref := metav1.GetControllerOf(got)
		if ref == nil || ref.UID != adopter.UID || !ptr.Deref(ref.BlockOwnerDeletion, false) {
			return false, fmt.Errorf("controller of %s: %+v", got.UID, ref)
		}
		return true, nil
	})
	if running := waitRunning(t, adopter); running.UID != vmi.UID {
		t.Errorf("the adopting VM runs instance %s, want the adopted %s", running.UID, vmi.UID)
	}
	created.expect(t, vm.Name, 1) // the adopted one
	if pods := launcherPods(t, vmi); len(pods) != 1 || pods[0].UID != pod.UID {
		t.Errorf("want the original launcher pod %s alone, got %s", pod.Name, describePods(pods))
	}
}

// TestTerminatingOrphanFencesAdoption: an orphaned instance that is already being deleted
// (a foreign finalizer holds it) is not adopted by a new VM of the same name, and the new VM
// starts its own instance only once the old one is gone.
func TestTerminatingOrphanFencesAdoption(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	created := recordVMIs(t, ns)
	vm := createVM(t, ns, "orphan", v1.RunStrategyAlways)
	old := waitRunning(t, vm)
	updateVMI(t, ns, vm.Name, func(vmi *v1.VirtualMachineInstance) {
		vmi.Finalizers = append(vmi.Finalizers, holdFinalizer)
	})
	t.Cleanup(func() { _ = releaseHold(ns, vm.Name) })
	err := virt.KubevirtV1().VirtualMachines(ns).Delete(t.Context(), vm.Name,
		metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})
	must(t, err)
	eventually(t, timeout, "the VM to be gone", vmGone(ns, vm.Name))
	deleteVMI(t, old)
	eventually(t, timeout, "the orphan terminating, held", heldOnly(ns, vm.Name))

	adopter := createVM(t, ns, "orphan", v1.RunStrategyAlways)
	eventually(t, timeout, "the new VM Stopping behind the terminating orphan", vmStatus(ns, vm.Name, v1.VirtualMachineStatusStopping))
	consistently(t, 2*time.Second, "the terminating orphan neither adopted nor replaced", func(ctx context.Context) (bool, error) {
		got, err := getVMI(ctx, ns, vm.Name)
		if err != nil {
			return false, err
		}
		if ref := metav1.GetControllerOf(got); got.UID != old.UID || ref != nil {
			return false, fmt.Errorf("instance %s controlled by %+v, want the unowned %s", got.UID, ref, old.UID)
		}
		if uids := created.of(vm.Name); len(uids) > 1 {
			return false, fmt.Errorf("instances created: %v", uids)
		}
		return true, nil
	})

	must(t, releaseHold(ns, vm.Name))
	fresh := waitRunningNot(t, adopter, old.UID)
	if ref := metav1.GetControllerOf(fresh); ref == nil || ref.UID != adopter.UID {
		t.Errorf("new instance controlled by %+v, want the new VM %s", ref, adopter.UID)
	}
	created.expect(t, vm.Name, 2) // the orphan, then one new
}

// TestCascadeDelete: deleting a VM the default (background) or foreground way removes its
// instance and the instance's launcher pod. In the foreground the VM stays, Terminating,
// until its instance is gone; a foreign finalizer on the instance makes that observable.
func TestCascadeDelete(t *testing.T) {
	t.Parallel()
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			created := recordVMIs(t, ns)
			vm := createVM(t, ns, "cascade", v1.RunStrategyAlways)
			vmi := waitRunning(t, vm)
			foreground := policy == metav1.DeletePropagationForeground
			if foreground {
				updateVMI(t, ns, vm.Name, func(vmi *v1.VirtualMachineInstance) {
					vmi.Finalizers = append(vmi.Finalizers, holdFinalizer)
				})
				t.Cleanup(func() { _ = releaseHold(ns, vm.Name) })
			}

			err := virt.KubevirtV1().VirtualMachines(ns).Delete(t.Context(), vm.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(policy)})
			must(t, err)
			if foreground {
				eventually(t, timeout, "the instance terminating, held", heldOnly(ns, vm.Name))
				eventually(t, timeout, "the VM Terminating", vmStatus(ns, vm.Name, v1.VirtualMachineStatusTerminating))
				consistently(t, time.Second, "the VM to wait for its instance", vmStatus(ns, vm.Name, v1.VirtualMachineStatusTerminating))
				must(t, releaseHold(ns, vm.Name))
			}
			eventually(t, timeout, "the VM to be gone", vmGone(ns, vm.Name))
			if foreground {
				if ok, err := vmiGone(ns, vm.Name)(t.Context()); !ok {
					t.Errorf("foreground: the VM went before its instance (%v)", err)
				}
			}
			eventually(t, timeout, "the instance to be gone", vmiGone(ns, vm.Name))
			eventually(t, timeout, "the launcher pod to be gone", noLauncherPods(ns, vmi.UID))
			created.expect(t, vm.Name, 1)
		})
	}
}

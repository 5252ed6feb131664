package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// timeout bounds every wait: each step takes well under a second on an idle machine.
const timeout = 30 * time.Second

// TestStartStopCycle starts a VirtualMachine (runStrategy Always) until its instance runs on the
// node, then halts it: the instance and its launcher pod go and the VM reports Stopped.
func TestStartStopCycle(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := createVM(t, ns, "cycle", v1.RunStrategyAlways)
	running := waitRunning(t, vm)

	pods := launcherPods(t, running)
	if len(pods) != 1 || pods[0].Spec.NodeName != nodeName || pods[0].Status.Phase != corev1.PodRunning {
		t.Fatalf("want one Running launcher pod on %s, got %s", nodeName, describePods(pods))
	}
	if ref := metav1.GetControllerOf(&pods[0]); ref == nil || ref.UID != running.UID {
		t.Errorf("launcher pod controller = %+v, want instance %s", ref, running.UID)
	}
	if running.Status.NodeName != nodeName {
		t.Errorf("instance node = %q, want %s", running.Status.NodeName, nodeName)
	}

	patch := []byte(`{"spec":{"runStrategy":"Halted"}}`)
	if _, err := virt.KubevirtV1().VirtualMachines(ns).Patch(t.Context(), vm.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the instance to be deleted", func(ctx context.Context) (bool, error) {
		_, err := virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	eventually(t, timeout, "the VM to be Stopped", vmStatus(ns, vm.Name, v1.VirtualMachineStatusStopped))
	if pods := launcherPods(t, running); len(pods) != 0 {
		t.Errorf("launcher pods left after the instance went: %s", describePods(pods))
	}
	got := getVM(t, ns, vm.Name)
	if got.Status.Created || got.Status.Ready {
		t.Errorf("halted VM status created=%v ready=%v, want both false", got.Status.Created, got.Status.Ready)
	}
}

// TestShutdownAndCrash: with runStrategy RerunOnFailure a crashed guest is started again in a new
// instance, and a guest shut down from inside stays down.
func TestShutdownAndCrash(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := createVM(t, ns, "rerun", v1.RunStrategyRerunOnFailure)
	first := waitRunning(t, vm)

	if err := node.Crash(t.Context(), ns, vm.Name); err != nil {
		t.Fatal(err)
	}
	var second *v1.VirtualMachineInstance
	eventually(t, timeout, "a new instance running after the crash", func(ctx context.Context) (bool, error) {
		vmi, err := virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		second = vmi
		return vmi.UID != first.UID && vmi.Status.Phase == v1.Running, nil
	})
	eventually(t, timeout, "the VM to be Running again", vmStatus(ns, vm.Name, v1.VirtualMachineStatusRunning))
	if pods := launcherPods(t, first); len(pods) != 0 {
		t.Errorf("launcher pods of the crashed instance left: %s", describePods(pods))
	}

	if err := node.Shutdown(t.Context(), ns, vm.Name); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the VM to be Stopped after the shutdown", vmStatus(ns, vm.Name, v1.VirtualMachineStatusStopped))
	consistently(t, 3*time.Second, "the shut-down instance to stay, Succeeded, with no new one", func(ctx context.Context) (bool, error) {
		vmi, err := virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if vmi.UID != second.UID || vmi.Status.Phase != v1.Succeeded {
			return false, fmt.Errorf("instance %s is %s (reason %q), want %s Succeeded", vmi.UID, vmi.Status.Phase, vmi.Status.Reason, second.UID)
		}
		return true, nil
	})
	pods := launcherPods(t, second)
	if len(pods) != 1 || pods[0].Status.Phase != corev1.PodSucceeded {
		t.Errorf("want the shut-down instance's launcher pod Succeeded, got %s", describePods(pods))
	}
}

package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	vmcontroller "github.com/vmctl/vmctl/controller/vm"
)

// TestAnEditedTemplateAsksForARestart: editing a running VM's template leaves its instance as
// it is and sets the VM's RestartRequired condition, as KubeVirt does; a run strategy change
// does not; the restart runs the edited template and clears the condition.
func TestAnEditedTemplateAsksForARestart(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := createVM(t, ns, "edited", v1.RunStrategyAlways)
	first := waitRunning(t, vm)
	if first.Annotations[vmcontroller.GenerationAnnotation] == "" {
		t.Errorf("instance annotations %v, want %s", first.Annotations, vmcontroller.GenerationAnnotation)
	}

	patchVM(t, ns, vm.Name, `{"spec":{"runStrategy":"Manual"}}`)
	eventually(t, timeout, "the VM to run Manual", func(ctx context.Context) (bool, error) {
		got, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		return err == nil && got.Status.RunStrategy == v1.RunStrategyManual, err
	})
	if ok, err := restartRequiredIs(ns, vm.Name, "")(t.Context()); !ok {
		t.Errorf("after a run strategy change: %v", err)
	}
	patchVM(t, ns, vm.Name, `{"spec":{"template":{"spec":{"domain":{"resources":{"requests":{"memory":"96Mi"}}}}}}}`)
	eventually(t, timeout, "the VM to require a restart", restartRequiredIs(ns, vm.Name, corev1.ConditionTrue))
	if got := getVM(t, ns, vm.Name); !got.Status.Ready || got.Status.PrintableStatus != v1.VirtualMachineStatusRunning {
		t.Errorf("VM %s ready=%v while it requires a restart; want Running and ready", got.Status.PrintableStatus, got.Status.Ready)
	}

	requestStateChange(t, ns, vm.Name, stopRequest(first.UID), v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest})
	second := waitRunningNot(t, vm, first.UID)
	if got := second.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; got.String() != "96Mi" {
		t.Errorf("restarted instance requests %s of memory, want the edited 96Mi", got.String())
	}
	eventually(t, timeout, "the restart to clear RestartRequired", restartRequiredIs(ns, vm.Name, ""))
}

func patchVM(t *testing.T, ns, name, patch string) {
	t.Helper()
	if _, err := virt.KubevirtV1().VirtualMachines(ns).Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// restartRequiredIs is a condition for eventually: the VM's RestartRequired condition has
// status want ("" for none).
func restartRequiredIs(ns, name string, want corev1.ConditionStatus) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var got corev1.ConditionStatus
		for _, c := range vm.Status.Conditions {
			if c.Type == v1.VirtualMachineRestartRequired {
				got = c.Status
			}
		}
		if got != want {
			return false, fmt.Errorf("RestartRequired %q", got)
		}
		return true, nil
	}
}

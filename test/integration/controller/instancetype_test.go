package controller

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestInstancetypesArePinnedAcrossRestarts: a VM naming a namespaced instance type runs with
// its vCPUs and memory, copied into a ControllerRevision the VM owns; growing the instance
// type afterwards changes neither the running instance nor the one a restart makes; and the
// revision goes with the VM.
func TestInstancetypesArePinnedAcrossRestarts(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	types := virt.InstancetypeV1beta1().VirtualMachineInstancetypes(ns)
	it, err := types.Create(t.Context(), &itv1beta1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "small"},
		Spec: itv1beta1.VirtualMachineInstancetypeSpec{
			CPU: itv1beta1.CPUInstancetype{Guest: 2}, Memory: itv1beta1.MemoryInstancetype{Guest: resource.MustParse("96Mi")},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm := newVM(ns, "typed")
	vm.Spec.RunStrategy = ptr.To(v1.RunStrategyAlways)
	vm.Spec.Template.Spec.Domain.Resources = v1.ResourceRequirements{} // the CRD admits it: the instance type sizes it
	vm.Spec.Instancetype = &v1.InstancetypeMatcher{Name: "small", Kind: v1.InstancetypeKind}
	vm = createVMObject(t, vm)

	check := func(vmi *v1.VirtualMachineInstance) {
		t.Helper()
		cpu, mem := vmi.Spec.Domain.CPU, vmi.Spec.Domain.Memory
		if cpu == nil || cpu.Sockets != 2 || mem == nil || mem.Guest.String() != "96Mi" {
			t.Fatalf("instance cpu %+v memory %+v, want 2 sockets and the pinned 96Mi", cpu, mem)
		}
	}
	first := waitRunning(t, vm)
	check(first)
	var revision string
	eventually(t, timeout, "status.instancetypeRef to name the revision", func(ctx context.Context) (bool, error) {
		got, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil || got.Status.InstancetypeRef == nil || got.Status.InstancetypeRef.ControllerRevisionRef == nil {
			return false, err
		}
		revision = got.Status.InstancetypeRef.ControllerRevisionRef.Name
		return true, nil
	})
	if want := "typed-small-v1beta1-" + string(it.UID) + "-1"; revision != want {
		t.Errorf("revision %s, want KubeVirt's name %s", revision, want)
	}
	rev, err := kube.AppsV1().ControllerRevisions(ns).Get(t.Context(), revision, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(rev); ref == nil || ref.UID != vm.UID {
		t.Errorf("revision controlled by %+v, want the VM", ref)
	}

	it.Spec.Memory.Guest = resource.MustParse("128Mi")
	if _, err := types.Update(t.Context(), it, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A restart: the instance goes, runStrategy Always makes a new one from the pinned copy.
	if err := virt.KubevirtV1().VirtualMachineInstances(ns).Delete(t.Context(), first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	check(waitRunningNot(t, vm, first.UID))

	if err := virt.KubevirtV1().VirtualMachines(ns).Delete(t.Context(), vm.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, timeout, "the garbage collector to delete the revision with the VM", func(ctx context.Context) (bool, error) {
		_, err := kube.AppsV1().ControllerRevisions(ns).Get(ctx, revision, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

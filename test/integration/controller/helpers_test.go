package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// vmiSpec is the smallest valid instance: 64Mi of memory and a container disk, killed at once
// when deleted.
func vmiSpec() v1.VirtualMachineInstanceSpec {
	return v1.VirtualMachineInstanceSpec{
		Domain: v1.DomainSpec{
			Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}},
			Devices:   v1.Devices{Disks: []v1.Disk{{Name: "containerdisk", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: "virtio"}}}}},
		},
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Volumes: []v1.Volume{{Name: "containerdisk", VolumeSource: v1.VolumeSource{
			ContainerDisk: &v1.ContainerDiskSource{Image: "kubevirt/cirros-container-disk-demo:latest"}}}},
	}
}

// newVM is a minimal valid VirtualMachine with neither spec.running nor spec.runStrategy set.
func newVM(ns, name string) *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"kubevirt.io/vm": name}},
		Spec: v1.VirtualMachineSpec{Template: &v1.VirtualMachineInstanceTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kubevirt.io/vm": name}},
			Spec:       vmiSpec(),
		}},
	}
}

// createVM creates a minimal valid VirtualMachine with the given run strategy.
func createVM(t *testing.T, ns, name string, strategy v1.VirtualMachineRunStrategy) *v1.VirtualMachine {
	t.Helper()
	vm := newVM(ns, name)
	vm.Spec.RunStrategy = ptr.To(strategy)
	return createVMObject(t, vm)
}

func createVMObject(t *testing.T, vm *v1.VirtualMachine) *v1.VirtualMachine {
	t.Helper()
	created, err := virt.KubevirtV1().VirtualMachines(vm.Namespace).Create(t.Context(), vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

// waitRunning waits until the VM reports Running with a Running, Ready instance, and returns
// the instance.
func waitRunning(t *testing.T, vm *v1.VirtualMachine) *v1.VirtualMachineInstance {
	t.Helper()
	return waitRunningNot(t, vm, "")
}

// waitRunningNot is waitRunning for an instance other than the one of UID old: a restart.
func waitRunningNot(t *testing.T, vm *v1.VirtualMachine, old types.UID) *v1.VirtualMachineInstance {
	t.Helper()
	var vmi *v1.VirtualMachineInstance
	what := fmt.Sprintf("VM %s/%s Running with a Running instance", vm.Namespace, vm.Name)
	if old != "" {
		what = fmt.Sprintf("VM %s/%s Running with a new instance (not %s)", vm.Namespace, vm.Name, old)
	}
	eventually(t, timeout, what, func(ctx context.Context) (bool, error) {
		got, err := virt.KubevirtV1().VirtualMachines(vm.Namespace).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.PrintableStatus != v1.VirtualMachineStatusRunning || !got.Status.Ready {
			return false, fmt.Errorf("VM printableStatus %q ready=%v", got.Status.PrintableStatus, got.Status.Ready)
		}
		vmi, err = getVMI(ctx, vm.Namespace, vm.Name)
		if err != nil {
			return false, err
		}
		if vmi.UID == old || vmi.Status.Phase != v1.Running {
			return false, fmt.Errorf("instance %s phase %q", vmi.UID, vmi.Status.Phase)
		}
		return true, nil
	})
	return vmi
}

// vmStatus is a condition for eventually: the VM's printable status is want.
func vmStatus(ns, name string, want v1.VirtualMachinePrintableStatus) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if vm.Status.PrintableStatus != want {
			return false, fmt.Errorf("printableStatus %q", vm.Status.PrintableStatus)
		}
		return true, nil
	}
}

// requestsConsumed is a condition for eventually: the VM has no state change request left.
func requestsConsumed(ns, name string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if reqs := vm.Status.StateChangeRequests; len(reqs) != 0 {
			return false, fmt.Errorf("requests %+v", reqs)
		}
		return true, nil
	}
}

// gone is a condition for eventually and consistently: get reports NotFound.
func gone(get func(ctx context.Context) error) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := get(ctx)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err == nil {
			return false, fmt.Errorf("still exists")
		}
		return false, err
	}
}

// vmiGone is gone for the instance ns/name.
func vmiGone(ns, name string) func(ctx context.Context) (bool, error) {
	return gone(func(ctx context.Context) error { _, err := getVMI(ctx, ns, name); return err })
}

// vmGone is gone for the VirtualMachine ns/name.
func vmGone(ns, name string) func(ctx context.Context) (bool, error) {
	return gone(func(ctx context.Context) error {
		_, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		return err
	})
}

// sameVMI is a condition for consistently: the instance ns/name is still uid, in phase.
func sameVMI(ns, name string, uid types.UID, phase v1.VirtualMachineInstancePhase) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vmi, err := getVMI(ctx, ns, name)
		if err != nil {
			return false, err
		}
		if vmi.UID != uid || vmi.Status.Phase != phase {
			return false, fmt.Errorf("instance %s is %s (reason %q), want %s %s", vmi.UID, vmi.Status.Phase, vmi.Status.Reason, uid, phase)
		}
		return true, nil
	}
}

func getVMI(ctx context.Context, ns, name string) (*v1.VirtualMachineInstance, error) {
	return virt.KubevirtV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
}

func getVM(t *testing.T, ns, name string) *v1.VirtualMachine {
	t.Helper()
	vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// Requests as virtctl writes them into status.stateChangeRequests.
var startRequest = v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest}

// stopRequest stops the instance of UID uid; an empty uid stops whatever instance runs.
func stopRequest(uid types.UID) v1.VirtualMachineStateChangeRequest {
	r := v1.VirtualMachineStateChangeRequest{Action: v1.StopRequest}
	if uid != "" {
		r.UID = ptr.To(uid)
	}
	return r
}

// requestStateChange replaces the VM's request queue, as the start/stop/restart subresources
// do: restart is stopRequest(current instance UID) followed by startRequest.
func requestStateChange(t *testing.T, ns, name string, reqs ...v1.VirtualMachineStateChangeRequest) {
	t.Helper()
	vms := virt.KubevirtV1().VirtualMachines(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vm, err := vms.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		vm.Status.StateChangeRequests = reqs
		_, err = vms.UpdateStatus(t.Context(), vm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("writing state change requests %+v on %s/%s: %v", reqs, ns, name, err)
	}
}

// updateVMI changes the stored instance, retrying on conflicts with the controllers' writes.
func updateVMI(t *testing.T, ns, name string, change func(*v1.VirtualMachineInstance)) *v1.VirtualMachineInstance {
	t.Helper()
	vmis := virt.KubevirtV1().VirtualMachineInstances(ns)
	var updated *v1.VirtualMachineInstance
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vmi, err := vmis.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(vmi)
		updated, err = vmis.Update(t.Context(), vmi, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating instance %s/%s: %v", ns, name, err)
	}
	return updated
}

// deleteVMI deletes the instance as a user would (kubectl delete vmi), guarded by its UID.
func deleteVMI(t *testing.T, vmi *v1.VirtualMachineInstance) {
	t.Helper()
	err := virt.KubevirtV1().VirtualMachineInstances(vmi.Namespace).Delete(t.Context(), vmi.Name,
		metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(vmi.UID)}})
	if err != nil {
		t.Fatalf("deleting instance %s/%s: %v", vmi.Namespace, vmi.Name, err)
	}
}

// launcherPods lists the instance's launcher pods from the API server.
func launcherPods(t *testing.T, vmi *v1.VirtualMachineInstance) []corev1.Pod {
	t.Helper()
	pods, err := kube.CoreV1().Pods(vmi.Namespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: labels.Set{v1.CreatedByLabel: string(vmi.UID)}.String()})
	if err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// noLauncherPods is a condition for eventually: the instance of UID uid has no pod left.
func noLauncherPods(ns string, uid types.UID) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
			LabelSelector: labels.Set{v1.CreatedByLabel: string(uid)}.String()})
		if err != nil {
			return false, err
		}
		if len(pods.Items) > 0 {
			return false, fmt.Errorf("%s", describePods(pods.Items))
		}
		return true, nil
	}
}

func describePods(pods []corev1.Pod) string {
	s := fmt.Sprintf("%d pods", len(pods))
	for _, p := range pods {
		s += fmt.Sprintf("; %s node=%q phase=%s deleting=%v", p.Name, p.Spec.NodeName, p.Status.Phase, p.DeletionTimestamp != nil)
	}
	return s
}

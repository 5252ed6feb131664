package controller

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestAVMWaitsForItsClaim: a VM whose volume names a claim that does not exist says
// ErrorPvcNotFound, its instance stays Pending saying which claim it waits for, and no launcher
// pod is made; once the claim is created, the VM runs.
func TestAVMWaitsForItsClaim(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := newVM(ns, "late")
	vm.Spec.RunStrategy = ptr.To(v1.RunStrategyAlways)
	spec := &vm.Spec.Template.Spec
	spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, v1.Disk{Name: "data", DiskDevice: v1.DiskDevice{Disk: &v1.DiskTarget{Bus: "virtio"}}})
	spec.Volumes = append(spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}})
	vm = createVMObject(t, vm)

	eventually(t, timeout, "the VM to say ErrorPvcNotFound", vmStatus(ns, vm.Name, v1.VirtualMachineStatusPvcNotFound))
	vmi, err := getVMI(t.Context(), ns, vm.Name)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("PVC %s/data does not exist, waiting for it to appear", ns)
	if c := vmi.Status.Condition(v1.VirtualMachineInstanceSynchronized); vmi.Status.Phase != v1.Pending || c == nil ||
		c.Reason != v1.VirtualMachineInstanceReasonPvcNotFound || c.Message != want {
		t.Errorf("instance %s, Synchronized %+v; want Pending, %s saying %q", vmi.Status.Phase, c, v1.VirtualMachineInstanceReasonPvcNotFound, want)
	}
	if pods := launcherPods(t, vmi); len(pods) != 0 {
		t.Errorf("launcher pods made before the claim exists: %s", describePods(pods))
	}

	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	if _, err := kube.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running := waitRunning(t, vm)
	if c := running.Status.Condition(v1.VirtualMachineInstanceSynchronized); c != nil && c.Reason == v1.VirtualMachineInstanceReasonPvcNotFound {
		t.Errorf("running instance still waits for its claim: %+v", c)
	}
}

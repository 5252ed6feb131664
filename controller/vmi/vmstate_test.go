package vmi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// An instance with a persistent TPM or EFI store gets its VM's state claim before its pod: the
// claim is created once, owned by the VM (or by a VM-less instance itself), and the pod, made
// once the claim is seen, mounts it where the launcher keeps the state.
func TestAnInstanceThatKeepsStateGetsItsVMsClaim(t *testing.T) {
	vm := metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "web", UID: "vm-uid", Controller: ptr.To(true)}
	self := metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "web", UID: "vmi-uid"}
	for _, tc := range []struct {
		name      string
		keep      func(*v1.VirtualMachineInstanceSpec)
		owners    []metav1.OwnerReference
		wantOwner metav1.OwnerReference
	}{
		{"persistent TPM of a VM", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.TPM = &v1.TPMDevice{Persistent: ptr.To(true)}
		}, []metav1.OwnerReference{vm}, metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachine", Name: "web", UID: "vm-uid"}},
		{"persistent EFI without a VM", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Firmware = &v1.Firmware{Bootloader: &v1.Bootloader{EFI: &v1.EFI{Persistent: ptr.To(true)}}}
		}, nil, self},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.OwnerReferences = tc.owners
			tc.keep(&vmi.Spec)
			f := newFixture(t, vmi)
			f.c.config.VMStateStorageClass = "state"

			if got := f.sync(); got != "create persistentvolumeclaims, patch virtualmachineinstances" {
				t.Fatalf("actions: %q, want the claim created and no pod yet", got)
			}
			claim, err := f.kube.CoreV1().PersistentVolumeClaims("ns").Get(t.Context(), "persistent-state-for-web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To("state"),
				VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: vmStateSize}},
			}
			if diff := cmp.Diff(want, claim.Spec); diff != "" {
				t.Errorf("claim spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]metav1.OwnerReference{tc.wantOwner}, claim.OwnerReferences); diff != "" {
				t.Errorf("claim owners (-want +got):\n%s", diff)
			}
			if c := f.stored().Status.Condition(v1.VirtualMachineInstanceSynchronized); c != nil {
				t.Errorf("waiting for its own claim, the instance says %+v", c)
			}

			_ = f.pvcs.Add(claim)
			if got := f.sync(); got != "create pods" {
				t.Fatalf("actions once the claim is seen: %q, want the pod created", got)
			}
			pods, _ := f.kube.CoreV1().Pods("ns").List(t.Context(), metav1.ListOptions{})
			pod := pods.Items[0]
			if !hasClaimVolume(pod.Spec.Volumes, layout.VMStateVolume, claim.Name) {
				t.Errorf("pod volumes %+v, want %s from claim %s", pod.Spec.Volumes, layout.VMStateVolume, claim.Name)
			}
			mounted := false
			for _, m := range pod.Spec.Containers[0].VolumeMounts {
				mounted = mounted || m.Name == layout.VMStateVolume && m.MountPath == layout.VMStateDir
			}
			if !mounted {
				t.Errorf("compute mounts %+v, want %s at %s", pod.Spec.Containers[0].VolumeMounts, layout.VMStateVolume, layout.VMStateDir)
			}
		})
	}
}

func hasClaimVolume(volumes []corev1.Volume, name, claim string) bool {
	for _, v := range volumes {
		if v.Name == name && v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
			return true
		}
	}
	return false
}

package vmi

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/hooks"
)

func TestLiveMigratable(t *testing.T) {
	claims := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for name, mode := range map[string]corev1.PersistentVolumeAccessMode{"shared": corev1.ReadWriteMany, "local": corev1.ReadWriteOnce} {
		_ = claims.Add(&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{mode}}})
	}
	pvcs := corelisters.NewPersistentVolumeClaimLister(claims)
	instance := func(edit func(*v1.VirtualMachineInstanceSpec)) *v1.VirtualMachineInstance {
		vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}}
		vmi.Spec.Networks = []v1.Network{{Name: "default", NetworkSource: v1.NetworkSource{Pod: &v1.PodNetwork{}}}}
		vmi.Spec.Domain.Devices.Interfaces = []v1.Interface{{Name: "default", InterfaceBindingMethod: v1.InterfaceBindingMethod{Masquerade: &v1.InterfaceMasquerade{}}}}
		edit(&vmi.Spec)
		return vmi
	}
	volume := func(src v1.VolumeSource) func(*v1.VirtualMachineInstanceSpec) {
		return func(s *v1.VirtualMachineInstanceSpec) { s.Volumes = []v1.Volume{{Name: "disk", VolumeSource: src}} }
	}
	claim := func(name string) v1.VolumeSource {
		return v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
	}
	sidecarClaim := func(name string) *v1.VirtualMachineInstance {
		vmi := instance(func(*v1.VirtualMachineInstanceSpec) {})
		vmi.Annotations = map[string]string{hooks.SidecarsAnnotation: `[{"image": "hook:1", "pvc": {"name": "` + name + `", "volumePath": "/data"}}]`}
		return vmi
	}
	tests := []struct {
		name       string
		vmi        *v1.VirtualMachineInstance
		wantReason string
		wantText   string
	}{
		{"masquerade, no disks", instance(func(*v1.VirtualMachineInstanceSpec) {}), "", ""},
		{"containerDisk: copied with the memory", instance(volume(v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "img"}})), "", ""},
		{"a ReadWriteMany PVC is used in place", instance(volume(claim("shared"))), "", ""},
		{"a ReadWriteOnce PVC", instance(volume(claim("local"))), v1.VirtualMachineInstanceReasonDisksNotMigratable, "PVC local is not shared"},
		{"a DataVolume's PVC", instance(volume(v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "local"}})), v1.VirtualMachineInstanceReasonDisksNotMigratable, "PVC local is not shared"},
		{"a missing PVC", instance(volume(claim("nowhere"))), v1.VirtualMachineInstanceReasonDisksNotMigratable, "PVC nowhere does not exist"},
		{"a hostDisk", instance(volume(v1.VolumeSource{HostDisk: &v1.HostDisk{Path: "/d.img"}})), v1.VirtualMachineInstanceReasonDisksNotMigratable, "hostDisk disk is not shared"},
		{"a shared hostDisk", instance(volume(v1.VolumeSource{HostDisk: &v1.HostDisk{Path: "/d.img", Shared: ptr.To(true)}})), "", ""},
		{"bridge on the pod network", instance(func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces[0].InterfaceBindingMethod = v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}
		}), v1.VirtualMachineInstanceReasonInterfaceNotMigratable, "does not use masquerade"},
		{"a filesystem", instance(func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes = []v1.Volume{{Name: "data", VolumeSource: claim("shared")}}
			s.Domain.Devices.Filesystems = []v1.Filesystem{{Name: "data", Virtiofs: &v1.FilesystemVirtiofs{}}}
		}), v1.VirtualMachineInstanceReasonVirtIOFSNotMigratable, "filesystem data is shared through virtiofs"},
		{"a persistent TPM", instance(func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.TPM = &v1.TPMDevice{Persistent: ptr.To(true)} }),
			v1.VirtualMachineInstanceReasonDisksNotMigratable, "persistent TPM or EFI state (PVC persistent-state-for-vm) is not shared"},
		{"a hook sidecar's ReadWriteOnce claim", sidecarClaim("local"), v1.VirtualMachineInstanceReasonDisksNotMigratable, "PVC local is not shared"},
		{"a hook sidecar's ReadWriteMany claim", sidecarClaim("shared"), "", ""},
		{"a TPM without persistence", instance(func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.TPM = &v1.TPMDevice{} }), "", ""},
		{"bridge on a secondary network", instance(func(s *v1.VirtualMachineInstanceSpec) {
			s.Networks = append(s.Networks, v1.Network{Name: "lan", NetworkSource: v1.NetworkSource{Multus: &v1.MultusNetwork{NetworkName: "lan"}}})
			s.Domain.Devices.Interfaces = append(s.Domain.Devices.Interfaces, v1.Interface{Name: "lan", InterfaceBindingMethod: v1.InterfaceBindingMethod{Bridge: &v1.InterfaceBridge{}}})
		}), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := liveMigratable(tt.vmi, pvcs)
			wantStatus := corev1.ConditionTrue
			if tt.wantReason != "" {
				wantStatus = corev1.ConditionFalse
			}
			if got.Type != v1.VirtualMachineInstanceIsMigratable || got.Status != wantStatus || got.Reason != tt.wantReason || !strings.Contains(got.Message, tt.wantText) {
				t.Errorf("condition %+v, want %s %s %q", got, wantStatus, tt.wantReason, tt.wantText)
			}
		})
	}
}

package v1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsVirtualMachineInstanceSpec(t *testing.T) {
	masqueradePod := func(spec *VirtualMachineInstanceSpec) {
		spec.Domain.Devices.Interfaces = []Interface{{Name: "default", InterfaceBindingMethod: InterfaceBindingMethod{Masquerade: &InterfaceMasquerade{}}}}
		spec.Networks = []Network{{Name: "default", NetworkSource: NetworkSource{Pod: &PodNetwork{}}}}
	}
	tests := []struct {
		name string
		in   VirtualMachineInstanceSpec
		want func(*VirtualMachineInstanceSpec)
	}{
		{
			name: "a volume without a disk gets a sata disk",
			in:   VirtualMachineInstanceSpec{Volumes: []Volume{{Name: "data", VolumeSource: VolumeSource{EmptyDisk: &EmptyDiskSource{}}}}},
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				s.Domain.Devices.Disks = []Disk{{Name: "data", DiskDevice: DiskDevice{Disk: &DiskTarget{Bus: DiskBusSATA}}}}
				masqueradePod(s)
			},
		},
		{
			name: "a volume a filesystem shares gets no disk",
			in: VirtualMachineInstanceSpec{Volumes: []Volume{{Name: "data", VolumeSource: VolumeSource{ConfigMap: &ConfigMapVolumeSource{Name: "app"}}}},
				Domain: DomainSpec{Devices: Devices{Filesystems: []Filesystem{{Name: "data", Virtiofs: &FilesystemVirtiofs{}}}}}},
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				masqueradePod(s)
			},
		},
		{
			name: "luns default to sata",
			in:   VirtualMachineInstanceSpec{Domain: DomainSpec{Devices: Devices{Disks: []Disk{{Name: "l", DiskDevice: DiskDevice{LUN: &LunTarget{}}}}}}},
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				s.Domain.Devices.Disks[0].LUN.Bus = DiskBusSATA
				masqueradePod(s)
			},
		},
		{
			name: "empty spec gets grace period and a pod network",
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				masqueradePod(s)
			},
		},
		{
			name: "explicit zero grace period is kept",
			in:   VirtualMachineInstanceSpec{TerminationGracePeriodSeconds: ptr.To[int64](0)},
			want: func(s *VirtualMachineInstanceSpec) { masqueradePod(s) },
		},
		{
			name: "guest memory defaults to the request",
			in: VirtualMachineInstanceSpec{Domain: DomainSpec{Resources: ResourceRequirements{
				Requests: k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse("64M")}}}},
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				s.Domain.Memory = &Memory{Guest: ptr.To(resource.MustParse("64M"))}
				masqueradePod(s)
			},
		},
		{
			name: "guest memory falls back to the limit",
			in: VirtualMachineInstanceSpec{Domain: DomainSpec{Resources: ResourceRequirements{
				Limits: k8sv1.ResourceList{k8sv1.ResourceMemory: resource.MustParse("128Mi")}}}},
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				s.Domain.Memory = &Memory{Guest: ptr.To(resource.MustParse("128Mi"))}
				masqueradePod(s)
			},
		},
		{
			name: "disks default to sata (KubeVirt on x86_64), cdroms to read-only sata",
			in: VirtualMachineInstanceSpec{Domain: DomainSpec{Devices: Devices{Disks: []Disk{
				{Name: "a"}, {Name: "b", DiskDevice: DiskDevice{CDRom: &CDRomTarget{}}}}}}},
			want: func(s *VirtualMachineInstanceSpec) {
				s.TerminationGracePeriodSeconds = ptr.To[int64](30)
				s.Domain.Devices.Disks[0].Disk = &DiskTarget{Bus: DiskBusSATA}
				s.Domain.Devices.Disks[1].CDRom = &CDRomTarget{Bus: DiskBusSATA, ReadOnly: ptr.To(true)}
				masqueradePod(s)
			},
		},
		{
			name: "no pod interface when autoattach is off",
			in:   VirtualMachineInstanceSpec{Domain: DomainSpec{Devices: Devices{AutoattachPodInterface: ptr.To(false)}}},
			want: func(s *VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr.To[int64](30) },
		},
		{
			name: "listed interfaces are left alone",
			in: VirtualMachineInstanceSpec{
				Domain:   DomainSpec{Devices: Devices{Interfaces: []Interface{{Name: "net", InterfaceBindingMethod: InterfaceBindingMethod{Bridge: &InterfaceBridge{}}}}}},
				Networks: []Network{{Name: "net", NetworkSource: NetworkSource{Pod: &PodNetwork{}}}},
			},
			want: func(s *VirtualMachineInstanceSpec) { s.TerminationGracePeriodSeconds = ptr.To[int64](30) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := *tt.in.DeepCopy()
			want := *tt.in.DeepCopy()
			tt.want(&want)
			want.Architecture = DefaultArchitecture
			SetDefaults_VirtualMachineInstanceSpec(&got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("defaults mismatch (-want +got):\n%s", diff)
			}
			again := *got.DeepCopy()
			SetDefaults_VirtualMachineInstanceSpec(&again)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("defaulting twice changed the spec (-once +twice):\n%s", diff)
			}
		})
	}
}

package admission

import (
	"strings"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestUnsupportedNamesTheMissingComponent(t *testing.T) {
	tests := []struct {
		name, field, why string
		edit             func(*v1.VirtualMachineInstanceSpec)
	}{
		{"supported spec", "", "", func(*v1.VirtualMachineInstanceSpec) {}},
		{"arm64", "spec.architecture", "supported values", func(s *v1.VirtualMachineInstanceSpec) { s.Architecture = "arm64" }},
		{"dataVolume", "spec.volumes[0].dataVolume", "CDI", func(s *v1.VirtualMachineInstanceSpec) {
			s.Volumes = []v1.Volume{{Name: "dv", VolumeSource: v1.VolumeSource{DataVolume: &v1.DataVolumeSource{Name: "dv"}}}}
		}},
		{"multus", "spec.networks[0].multus", "Multus", func(s *v1.VirtualMachineInstanceSpec) {
			s.Networks = []v1.Network{{Name: "n", NetworkSource: v1.NetworkSource{Multus: &v1.MultusNetwork{NetworkName: "x"}}}}
		}},
		{"sriov", "spec.domain.devices.interfaces[0].sriov", "SR-IOV", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces = []v1.Interface{{Name: "n", InterfaceBindingMethod: v1.InterfaceBindingMethod{SRIOV: &v1.InterfaceSRIOV{}}}}
		}},
		{"slirp", "spec.domain.devices.interfaces[0].slirp", "removed in KubeVirt 1.3", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Interfaces = []v1.Interface{{Name: "n", InterfaceBindingMethod: v1.InterfaceBindingMethod{Slirp: &v1.InterfaceSlirp{}}}}
		}},
		{"gpu", "spec.domain.devices.gpus", "device plugin", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.GPUs = []v1.GPU{{Name: "g", DeviceName: "nvidia.com/GP102GL"}}
		}},
		{"host device", "spec.domain.devices.hostDevices", "device plugin", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.HostDevices = []v1.HostDevice{{Name: "h", DeviceName: "intel.com/qat"}}
		}},
		{"dedicated cpus", "spec.domain.cpu.dedicatedCpuPlacement", "CPU manager", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.CPU = &v1.CPU{DedicatedCPUPlacement: true}
		}},
		{"an exec probe runs through the guest agent", "", "", func(s *v1.VirtualMachineInstanceSpec) {
			s.ReadinessProbe = &v1.Probe{Handler: v1.Handler{Exec: &k8sv1.ExecAction{Command: []string{"true"}}}}
		}},
		{"so does a guest agent ping", "", "", func(s *v1.VirtualMachineInstanceSpec) {
			s.LivenessProbe = &v1.Probe{Handler: v1.Handler{GuestAgentPing: &v1.GuestAgentPing{}}}
		}},
		{"eviction by live migration is fine", "", "", func(s *v1.VirtualMachineInstanceSpec) {
			s.EvictionStrategy = ptr.To(v1.EvictionStrategyLiveMigrate)
		}},
		{"eviction None is fine", "", "", func(s *v1.VirtualMachineInstanceSpec) { s.EvictionStrategy = ptr.To(v1.EvictionStrategyNone) }},
		{"lun", "spec.domain.devices.disks[0].lun", "block-mode", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.Disks = []v1.Disk{{Name: "l", DiskDevice: v1.DiskDevice{LUN: &v1.LunTarget{}}}}
		}},
		{"tpm is emulated", "", "", func(s *v1.VirtualMachineInstanceSpec) { s.Domain.Devices.TPM = &v1.TPMDevice{} }},
		{"persistent tpm", "", "", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.TPM = &v1.TPMDevice{Persistent: ptr.To(true)}
		}},
		{"disabled tpm is fine", "", "", func(s *v1.VirtualMachineInstanceSpec) {
			s.Domain.Devices.TPM = &v1.TPMDevice{Enabled: ptr.To(false)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var spec v1.VirtualMachineInstanceSpec
			tt.edit(&spec)
			errs := unsupported(field.NewPath("spec"), &spec)
			if tt.field == "" {
				if len(errs) > 0 {
					t.Fatalf("refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || errs[0].Field != tt.field || !strings.Contains(errs[0].Error(), tt.why) {
				t.Fatalf("got %v; want one error on %s naming %q", errs, tt.field, tt.why)
			}
		})
	}
}

func TestDataVolumeTemplatesNeedCDI(t *testing.T) {
	vm := &v1.VirtualMachine{Spec: v1.VirtualMachineSpec{DataVolumeTemplates: []v1.DataVolumeTemplateSpec{{}}}}
	errs := unsupportedVM(field.NewPath("spec"), vm)
	if len(errs) != 1 || errs[0].Field != "spec.dataVolumeTemplates" || !strings.Contains(errs[0].Detail, "CDI") {
		t.Fatalf("got %v", errs)
	}
}

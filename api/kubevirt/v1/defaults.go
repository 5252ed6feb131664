package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultTerminationGracePeriodSeconds is the grace period an instance gets when none is set.
const DefaultTerminationGracePeriodSeconds int64 = 30

// DefaultNetworkName is the name of the pod network attached when none is listed.
const DefaultNetworkName = "default"

// SetDefaults_VirtualMachineInstanceSpec fills the fields KubeVirt defaults at admission, so
// that every later reader (controller, node agent) sees the same complete spec.
func SetDefaults_VirtualMachineInstanceSpec(spec *VirtualMachineInstanceSpec) {
	if spec.TerminationGracePeriodSeconds == nil {
		grace := DefaultTerminationGracePeriodSeconds
		spec.TerminationGracePeriodSeconds = &grace
	}
	if spec.Domain.Memory == nil || spec.Domain.Memory.Guest == nil {
		if guest, ok := requestedMemory(&spec.Domain.Resources); ok {
			if spec.Domain.Memory == nil {
				spec.Domain.Memory = &Memory{}
			}
			spec.Domain.Memory.Guest = &guest
		}
	}
	for i := range spec.Domain.Devices.Disks {
		setDiskDefaults(&spec.Domain.Devices.Disks[i])
	}
	setNetworkDefaults(spec)
}

// requestedMemory is the memory request, or else the limit: what sizes the guest by default.
func requestedMemory(r *ResourceRequirements) (resource.Quantity, bool) {
	if q, ok := r.Requests["memory"]; ok {
		return q.DeepCopy(), true
	}
	if q, ok := r.Limits["memory"]; ok {
		return q.DeepCopy(), true
	}
	return resource.Quantity{}, false
}

func setDiskDefaults(d *Disk) {
	switch {
	case d.CDRom != nil:
		if d.CDRom.Bus == "" {
			d.CDRom.Bus = DiskBusSATA
		}
		if d.CDRom.ReadOnly == nil {
			readOnly := true
			d.CDRom.ReadOnly = &readOnly
		}
	default:
		if d.Disk == nil {
			d.Disk = &DiskTarget{}
		}
		if d.Disk.Bus == "" {
			d.Disk.Bus = DiskBusVirtio
		}
	}
}

// setNetworkDefaults attaches the pod network through masquerade when the spec names no
// interface and no network, as KubeVirt does unless autoattachPodInterface is false.
func setNetworkDefaults(spec *VirtualMachineInstanceSpec) {
	devices := &spec.Domain.Devices
	if devices.AutoattachPodInterface != nil && !*devices.AutoattachPodInterface {
		return
	}
	if len(devices.Interfaces) > 0 || len(spec.Networks) > 0 {
		return
	}
	devices.Interfaces = []Interface{{
		Name:                   DefaultNetworkName,
		InterfaceBindingMethod: InterfaceBindingMethod{Masquerade: &InterfaceMasquerade{}},
	}}
	spec.Networks = []Network{{Name: DefaultNetworkName, NetworkSource: NetworkSource{Pod: &PodNetwork{}}}}
}

// DefaultMachineType is the machine type an instance gets when its spec names none (or names
// ""): q35, KubeVirt's default on x86, with PCIe and SATA.
const DefaultMachineType = "q35"

// SetDefaultMachineType sets spec.domain.machine.type when it is unset or empty. virt-api's
// defaulting webhook applies it at admission, so the stored spec says what the guest runs on.
func SetDefaultMachineType(spec *VirtualMachineInstanceSpec) {
	if spec.Domain.Machine == nil {
		spec.Domain.Machine = &Machine{}
	}
	if spec.Domain.Machine.Type == "" {
		spec.Domain.Machine.Type = DefaultMachineType
	}
}

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
	if spec.Architecture == "" {
		spec.Architecture = DefaultArchitecture
	}
	addDisksForVolumes(spec)
	readOnly := map[string]bool{}
	for _, v := range spec.Volumes {
		readOnly[v.Name] = (v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ReadOnly) || v.DownwardMetrics != nil
	}
	for i := range spec.Domain.Devices.Disks {
		d := &spec.Domain.Devices.Disks[i]
		setDiskDefaults(d, readOnly[d.Name])
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

// setDiskDefaults fills in the bus. A read-only disk gets virtio instead of SATA, whose QEMU
// device cannot be read-only.
func setDiskDefaults(d *Disk, readOnlyVolume bool) {
	switch {
	case d.CDRom != nil:
		if d.CDRom.Bus == "" {
			d.CDRom.Bus = DefaultDiskBus
		}
		if d.CDRom.ReadOnly == nil {
			readOnly := true
			d.CDRom.ReadOnly = &readOnly
		}
	case d.LUN != nil:
		if d.LUN.Bus == "" {
			d.LUN.Bus = DefaultDiskBus
		}
	default:
		if d.Disk == nil {
			d.Disk = &DiskTarget{}
		}
		if d.Disk.Bus == "" && (d.Disk.ReadOnly || readOnlyVolume) {
			d.Disk.Bus = DiskBusVirtio
		}
		if d.Disk.Bus == "" {
			d.Disk.Bus = DefaultDiskBus
		}
	}
}

// addDisksForVolumes gives every volume without a disk or a filesystem of its name a disk, as
// KubeVirt does: a volume is otherwise invisible to the guest.
func addDisksForVolumes(spec *VirtualMachineInstanceSpec) {
	has := spec.SharedVolumes()
	for _, d := range spec.Domain.Devices.Disks {
		has[d.Name] = true
	}
	for _, v := range spec.Volumes {
		if !has[v.Name] {
			spec.Domain.Devices.Disks = append(spec.Domain.Devices.Disks, Disk{Name: v.Name})
		}
	}
}

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

// DefaultArchitecture is what KubeVirt writes into every instance on x86_64 nodes, the only
// architecture this platform runs.
const DefaultArchitecture = "amd64"

// DefaultDiskBus is KubeVirt's default bus on x86_64 for disks, CD-ROMs and LUNs: SATA,
// which every guest OS drives without extra drivers.
const DefaultDiskBus = DiskBusSATA

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

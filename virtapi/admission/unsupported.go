package admission

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// The cluster components KubeVirt manifests may need and this platform does not bring. Each
// refusal names one, so the user knows what to install or change instead of guessing.
const (
	needsCDI          = "needs CDI (the Containerized Data Importer), which this cluster does not have; use a persistentVolumeClaim, an ephemeral PVC or a containerDisk"
	needsMultus       = "needs Multus (NetworkAttachmentDefinitions), which this cluster does not have; only the pod network is available"
	needsSRIOV        = "needs SR-IOV devices and Multus, which this cluster does not have"
	needsDevicePlugin = "needs a device plugin that offers this device, which this cluster does not have"
	needsCPUManager   = "needs dedicated CPUs (the kubelet's static CPU manager policy), which this platform does not configure"
	removedBinding    = "was removed in KubeVirt 1.3; use masquerade or bridge"
	needsBindingPlug  = "needs a network binding plugin, which this cluster does not have; use masquerade or bridge"
	notOnThisNode     = "is not available on this platform's nodes"
)

// unsupported refuses the fields of the KubeVirt schema this platform cannot honour. They are
// part of the schema, so a KubeVirt manifest decodes and gets this reason instead of a
// strict-decoding error or, worse, a silently ignored field.
func unsupported(path *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	var errs field.ErrorList
	forbid := func(p *field.Path, why string) { errs = append(errs, field.Forbidden(p, why)) }
	if spec.Architecture != "" && spec.Architecture != v1.DefaultArchitecture {
		errs = append(errs, field.NotSupported(path.Child("architecture"), spec.Architecture, []string{v1.DefaultArchitecture}))
	}
	d := path.Child("domain")
	if cpu := spec.Domain.CPU; cpu != nil {
		if cpu.DedicatedCPUPlacement {
			forbid(d.Child("cpu", "dedicatedCpuPlacement"), needsCPUManager)
		}
		if cpu.IsolateEmulatorThread {
			forbid(d.Child("cpu", "isolateEmulatorThread"), needsCPUManager)
		}
		if cpu.NUMA != nil {
			forbid(d.Child("cpu", "numa"), needsCPUManager+" and hugepages")
		}
		if cpu.Realtime != nil {
			forbid(d.Child("cpu", "realtime"), needsCPUManager)
		}
		if cpu.MaxSockets != 0 {
			forbid(d.Child("cpu", "maxSockets"), "CPU hotplug "+notOnThisNode)
		}
	}
	if m := spec.Domain.Memory; m != nil && m.MaxGuest != nil {
		forbid(d.Child("memory", "maxGuest"), "memory hotplug "+notOnThisNode)
	}
	if spec.Domain.LaunchSecurity != nil {
		forbid(d.Child("launchSecurity"), "needs AMD SEV, which "+notOnThisNode)
	}
	errs = append(errs, unsupportedDevices(d.Child("devices"), &spec.Domain.Devices)...)
	errs = append(errs, unsupportedVolumes(path.Child("volumes"), spec.Volumes)...)
	for i, n := range spec.Networks {
		if n.Multus != nil {
			forbid(path.Child("networks").Index(i).Child("multus"), needsMultus)
		}
	}
	if len(spec.ResourceClaims) > 0 {
		forbid(path.Child("resourceClaims"), "DRA devices "+needsDevicePlugin)
	}
	return errs
}

func unsupportedDevices(path *field.Path, devs *v1.Devices) field.ErrorList {
	var errs field.ErrorList
	forbid := func(p *field.Path, why string) { errs = append(errs, field.Forbidden(p, why)) }
	if len(devs.GPUs) > 0 {
		forbid(path.Child("gpus"), "GPUs "+needsDevicePlugin)
	}
	if len(devs.HostDevices) > 0 {
		forbid(path.Child("hostDevices"), "host devices "+needsDevicePlugin)
	}
	if devs.ClientPassthrough != nil {
		forbid(path.Child("clientPassthrough"), "USB redirection "+notOnThisNode)
	}
	if devs.AutoattachVSOCK != nil && *devs.AutoattachVSOCK {
		forbid(path.Child("autoattachVSOCK"), "vsock (/dev/vhost-vsock) "+notOnThisNode)
	}
	for i, disk := range devs.Disks {
		if disk.LUN != nil {
			forbid(path.Child("disks").Index(i).Child("lun"), "a LUN passes SCSI commands through to the device (QEMU's scsi-block), which needs a raw-I/O capability the unprivileged launcher does not have: use disk, which takes a block-mode claim too")
		}
	}
	for i, iface := range devs.Interfaces {
		p := path.Child("interfaces").Index(i)
		errs = append(errs, dhcpOptions(p.Child("dhcpOptions"), iface.DHCPOptions)...)
		if iface.State == "absent" {
			forbid(p.Child("state"), "interface hot-unplug "+notOnThisNode)
		}
		switch {
		case iface.SRIOV != nil:
			forbid(p.Child("sriov"), needsSRIOV)
		case iface.Slirp != nil:
			forbid(p.Child("slirp"), removedBinding)
		case iface.Macvtap != nil:
			forbid(p.Child("macvtap"), removedBinding)
		case iface.Passt != nil:
			forbid(p.Child("passt"), removedBinding)
		case iface.PasstBinding != nil:
			forbid(p.Child("passtBinding"), needsBindingPlug)
		case iface.Binding != nil:
			forbid(p.Child("binding"), needsBindingPlug)
		}
	}
	return errs
}

// volumeKindsRefused maps the volume sources the node cannot provide to the reason.
var volumeKindsRefused = map[string]string{
	"dataVolume": needsCDI,
}

func unsupportedVolumes(path *field.Path, volumes []v1.Volume) field.ErrorList {
	var errs field.ErrorList
	accounts := 0
	for i := range volumes {
		if volumes[i].ServiceAccount != nil {
			if accounts++; accounts > 1 {
				errs = append(errs, field.Forbidden(path.Index(i).Child("serviceAccount"), "only one serviceAccount volume: the launcher pod runs as that service account"))
			}
		}
		for _, kind := range volumes[i].SourceKinds() {
			if why, refused := volumeKindsRefused[kind]; refused {
				errs = append(errs, field.Forbidden(path.Index(i).Child(kind), why))
			}
		}
		if pvc := volumes[i].PersistentVolumeClaim; pvc != nil && pvc.Hotpluggable {
			errs = append(errs, field.Forbidden(path.Index(i).Child("persistentVolumeClaim", "hotpluggable"), fmt.Sprintf("volume hotplug %s", notOnThisNode)))
		}
	}
	return errs
}

// unsupportedVM refuses what a VirtualMachine itself asks for and the cluster lacks.
func unsupportedVM(path *field.Path, vm *v1.VirtualMachine) field.ErrorList {
	if len(vm.Spec.DataVolumeTemplates) > 0 {
		return field.ErrorList{field.Forbidden(path.Child("dataVolumeTemplates"), needsCDI)}
	}
	return nil
}

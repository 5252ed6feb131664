package handler

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
)

// domainDevices is what the handler reports of a running domain as libvirt completed its
// definition. It is read once per connection: a domain's devices do not change while it
// runs.
type domainDevices struct {
	// macs maps each tap device to its NIC's MAC address, as libvirt chose it when the
	// spec named none.
	macs map[string]string
	// drives maps each disk target (vda) to the spec's disk name.
	drives map[string]string
	// machine is the machine type QEMU runs, resolved (pc-q35-7.2 for q35).
	machine string
}

// devices returns the pod's domain's devices, read from its live XML the first time.
func (c *Controller) devices(podUID types.UID, lv Libvirt, name string, vmi *v1.VirtualMachineInstance) (*domainDevices, error) {
	return c.conns.devices(podUID, func() (*domainDevices, error) {
		d, err := liveDomain(lv, name)
		if err != nil {
			return nil, err
		}
		// Whether a guest agent is connected already (an adopted domain; for a new one
		// libvirt's events say when it connects).
		c.conns.agentSeen(podUID, name, agentConnected(d))
		return devicesOf(d, vmi), nil
	})
}

func devicesOf(d *libvirtxml.Domain, vmi *v1.VirtualMachineInstance) *domainDevices {
	dev := &domainDevices{macs: map[string]string{}, drives: domainDrives(d, vmi)}
	if d.OS != nil && d.OS.Type != nil {
		dev.machine = d.OS.Type.Machine
	}
	if d.Devices == nil {
		return dev
	}
	for _, iface := range d.Devices.Interfaces {
		if iface.Target != nil && iface.Target.Dev != "" && iface.MAC != nil && iface.MAC.Address != "" {
			dev.macs[iface.Target.Dev] = iface.MAC.Address
		}
	}
	return dev
}

// domainDrives maps the domain's disk targets to the spec's disk names: by the disk's user
// alias, else by position (the domain has one disk per spec disk, in the spec's order) when
// the counts agree; otherwise the target is left out.
func domainDrives(d *libvirtxml.Domain, vmi *v1.VirtualMachineInstance) map[string]string {
	drives := map[string]string{}
	if d.Devices == nil {
		return drives
	}
	spec := vmi.Spec.Domain.Devices.Disks
	for i, disk := range d.Devices.Disks {
		if disk.Target == nil || disk.Target.Dev == "" {
			continue
		}
		switch {
		case disk.Alias != nil && strings.HasPrefix(disk.Alias.Name, domain.DiskAliasPrefix):
			drives[disk.Target.Dev] = strings.TrimPrefix(disk.Alias.Name, domain.DiskAliasPrefix)
		case len(d.Devices.Disks) == len(spec):
			drives[disk.Target.Dev] = spec[i].Name
		}
	}
	return drives
}

// volumeTargets sets each volume's target: the device of the disk of its name.
func volumeTargets(vmi *v1.VirtualMachineInstance, drives map[string]string) {
	targets := make(map[string]string, len(drives))
	for target, disk := range drives {
		targets[disk] = target
	}
	vmi.Status.SyncVolumeStatus(vmi.Spec.Volumes, func(vs *v1.VolumeStatus, _ *v1.Volume) {
		vs.Target = targets[vs.Name]
	})
}

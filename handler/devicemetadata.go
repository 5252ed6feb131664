package handler

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
)

// DeviceData is one tagged device in the config drive's meta_data.json, in the format
// KubeVirt writes (OpenStack's device metadata): the guest finds the device by its bus and
// address, and knows it by its tags.
type DeviceData struct {
	Type    string   `json:"type"`
	Bus     string   `json:"bus"`
	Address string   `json:"address"`
	MAC     string   `json:"mac,omitempty"`
	Serial  string   `json:"serial,omitempty"`
	Tags    []string `json:"tags"`
}

// Device types of DeviceData.
const (
	deviceNIC  = "nic"
	deviceDisk = "disk"
)

// needsDeviceMetadata says whether the instance has a config drive and tags a disk or an
// interface: only then does the handler ask libvirt for device addresses.
func needsDeviceMetadata(vmi *v1.VirtualMachineInstance) bool {
	drive := false
	for _, vol := range vmi.Spec.Volumes {
		drive = drive || vol.CloudInitConfigDrive != nil
	}
	if !drive {
		return false
	}
	for _, d := range vmi.Spec.Domain.Devices.Disks {
		if d.Tag != "" {
			return true
		}
	}
	for _, iface := range vmi.Spec.Domain.Devices.Interfaces {
		if iface.Tag != "" {
			return true
		}
	}
	return false
}

// deviceMetadata lists the tagged devices of dom, the instance's converted domain, with the
// addresses libvirt gives them. libvirt assigns addresses when it defines a domain, alike for
// alike devices, so a probe definition of dom's devices under another name and UUID shows
// them before the domain exists: the config drive is written before the domain is defined,
// and a migration's target writes the same drive as its source without the source's domain.
func deviceMetadata(vmi *v1.VirtualMachineInstance, dom *libvirtxml.Domain, lv Libvirt) ([]DeviceData, error) {
	probe := *dom
	probe.Name = dom.Name + "-addresses"
	// Fixed for the domain, so a probe left defined by an interrupted call is replaced.
	probe.UUID = uuid.NewSHA1(uuid.NameSpaceOID, []byte(dom.UUID)).String()
	xml, err := domain.Marshal(&probe)
	if err != nil {
		return nil, specError{err}
	}
	raw, err := lv.ProbeDefinition(xml)
	if err != nil {
		return nil, fmt.Errorf("device addresses for the config drive: %w", err)
	}
	var defined libvirtxml.Domain
	if err := defined.Unmarshal(raw); err != nil {
		return nil, fmt.Errorf("parsing the probe domain's XML: %w", err)
	}
	return taggedDevices(vmi, &defined), nil
}

// taggedDevices reads the tagged interfaces and disks out of a defined domain. Interfaces
// are matched by position (the converter gives each spec interface its NIC in spec order,
// which libvirt keeps), disks by their alias.
func taggedDevices(vmi *v1.VirtualMachineInstance, defined *libvirtxml.Domain) []DeviceData {
	if defined.Devices == nil {
		return nil
	}
	var out []DeviceData
	nics, ifaces := defined.Devices.Interfaces, vmi.Spec.Domain.Devices.Interfaces
	for i, iface := range ifaces {
		if iface.Tag == "" || len(nics) != len(ifaces) {
			continue
		}
		bus, addr := deviceAddress(nics[i].Address)
		if addr == "" {
			continue
		}
		d := DeviceData{Type: deviceNIC, Bus: bus, Address: addr, Tags: []string{iface.Tag}}
		if nics[i].MAC != nil {
			d.MAC = nics[i].MAC.Address
		}
		out = append(out, d)
	}
	aliased := map[string]*libvirtxml.DomainDisk{}
	for i, d := range defined.Devices.Disks {
		if d.Alias != nil {
			aliased[strings.TrimPrefix(d.Alias.Name, domain.DiskAliasPrefix)] = &defined.Devices.Disks[i]
		}
	}
	for _, disk := range vmi.Spec.Domain.Devices.Disks {
		d, ok := aliased[disk.Name]
		if disk.Tag == "" || !ok {
			continue
		}
		bus, addr := deviceAddress(d.Address)
		if bus == "drive" && d.Target != nil {
			bus = d.Target.Bus // sata or scsi: the controller's kind
		}
		if addr != "" {
			out = append(out, DeviceData{Type: deviceDisk, Bus: bus, Address: addr, Serial: d.Serial, Tags: []string{disk.Tag}})
		}
	}
	return out
}

// deviceAddress is a device's bus and address as the guest sees them: a PCI address as
// Linux writes it (0000:01:00.0), a drive's controller:bus:target:unit.
func deviceAddress(a *libvirtxml.DomainAddress) (bus, addr string) {
	switch {
	case a == nil:
		return "", ""
	case a.PCI != nil:
		p := a.PCI
		return "pci", fmt.Sprintf("%04x:%02x:%02x.%x", ptr.Deref(p.Domain, 0), ptr.Deref(p.Bus, 0), ptr.Deref(p.Slot, 0), ptr.Deref(p.Function, 0))
	case a.Drive != nil:
		d := a.Drive
		return "drive", fmt.Sprintf("%d:%d:%d:%d", ptr.Deref(d.Controller, 0), ptr.Deref(d.Bus, 0), ptr.Deref(d.Target, 0), ptr.Deref(d.Unit, 0))
	}
	return "", ""
}

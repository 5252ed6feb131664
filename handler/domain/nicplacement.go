package domain

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// nicPlacement applies an interface's boot order, PCI address and queues to a libvirt NIC.
func (c *converter) nicPlacement(p *field.Path, iface *v1.Interface, nic *libvirtxml.DomainInterface) bool {
	if iface.BootOrder != nil {
		if !c.bootOrder(p.Child("bootOrder"), *iface.BootOrder) {
			return false
		}
		nic.Boot = &libvirtxml.DomainDeviceBoot{Order: *iface.BootOrder}
	}
	if iface.PciAddress != "" {
		addr, ok := c.pciAddress(p.Child("pciAddress"), iface.PciAddress)
		if !ok {
			return false
		}
		nic.Address = addr
	}
	if iface.ACPIIndex > 0 {
		nic.ACPI = &libvirtxml.DomainDeviceACPI{Index: uint(iface.ACPIIndex)}
	}
	if iface.State == "down" {
		nic.Link = &libvirtxml.DomainInterfaceLink{State: "down"}
	}
	if ptr.Deref(c.vmi.Spec.Domain.Devices.UseVirtioTransitional, false) && nic.Model != nil && nic.Model.Type == "virtio" {
		nic.Model.Type = "virtio-transitional"
	}
	if ptr.Deref(c.vmi.Spec.Domain.Devices.NetworkInterfaceMultiQueue, false) && nic.Model != nil && strings.HasPrefix(nic.Model.Type, "virtio") {
		if q := c.vcpus(); q > 1 {
			nic.Driver = &libvirtxml.DomainInterfaceDriver{Queues: q}
		}
	}
	return true
}

// userNICPlacement is nicPlacement for a NIC QEMU creates from its command line (user-mode
// networking): the same settings as -device properties. Multi-queue needs a tap device, so
// it does not apply here.
func (c *converter) userNICPlacement(p *field.Path, iface *v1.Interface) (string, bool) {
	extra := ""
	if iface.BootOrder != nil {
		if !c.bootOrder(p.Child("bootOrder"), *iface.BootOrder) {
			return "", false
		}
		extra += fmt.Sprintf(",bootindex=%d", *iface.BootOrder)
	}
	if iface.PciAddress != "" {
		addr, ok := c.pciAddress(p.Child("pciAddress"), iface.PciAddress)
		if !ok {
			return "", false
		}
		pci := addr.PCI
		if *pci.Domain != 0 || *pci.Bus != 0 {
			c.fail(field.Invalid(p.Child("pciAddress"), iface.PciAddress, "this node's user-mode network can only place a NIC on bus 00 of domain 0000"))
			return "", false
		}
		extra += fmt.Sprintf(",bus=pcie.0,addr=%02x.%x", *pci.Slot, *pci.Function)
	}
	return extra, true
}

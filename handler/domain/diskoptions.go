package domain

import (
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// diskOptions applies a disk's cache, I/O, error policy, sharing, block size, queues,
// rotation rate and PCI address to its libvirt disk (whose driver source() already set).
func (c *converter) diskOptions(p *field.Path, spec *v1.Disk, disk *libvirtxml.DomainDisk) bool {
	drv := disk.Driver
	drv.Cache, drv.IO = string(spec.Cache), string(spec.IO)
	if spec.IO == v1.IODefault {
		drv.IO = ""
	}
	if spec.IO == v1.IONative && spec.Cache != v1.CacheNone {
		// QEMU refuses aio=native without O_DIRECT.
		c.fail(field.Invalid(p.Child("io"), spec.IO, "native I/O needs cache: none"))
		return false
	}
	if spec.ErrorPolicy != nil {
		drv.ErrorPolicy = string(*spec.ErrorPolicy)
	}
	if spec.Shareable != nil && *spec.Shareable {
		disk.Shareable = &libvirtxml.DomainDiskShareable{}
		if drv.Cache == "" {
			drv.Cache = string(v1.CacheNone) // a shared disk must not be cached by one host
		}
	}
	if bs := spec.BlockSize; bs != nil && bs.Custom != nil {
		disk.BlockIO = &libvirtxml.DomainDiskBlockIO{LogicalBlockSize: bs.Custom.Logical, PhysicalBlockSize: bs.Custom.Physical, DiscardGranularity: bs.Custom.DiscardGranularity}
	}
	virtio := disk.Target.Bus == string(v1.DiskBusVirtio)
	if virtio && ptr.Deref(c.vmi.Spec.Domain.Devices.UseVirtioTransitional, false) {
		disk.Model = "virtio-transitional" // for guests older than virtio 1.0 (RHEL 6 ...)
	}
	if spec.CDRom != nil && spec.CDRom.Tray == "open" {
		disk.Target.Tray = "open"
	}
	if ptr.Deref(c.vmi.Spec.Domain.Devices.BlockMultiQueue, false) && virtio {
		queues := c.vcpus()
		drv.Queues = &queues
	}
	if spec.Disk != nil && spec.Disk.SolidState {
		if virtio {
			c.fail(field.Invalid(p.Child("disk", "solidState"), true, "only a scsi or sata disk can be solid-state: virtio-blk has no rotation rate"))
			return false
		}
		disk.Target.RotationRate = 1 // the SCSI and ATA value for a non-rotating medium
	}
	if spec.Disk != nil && spec.Disk.PciAddress != "" {
		if !virtio {
			c.fail(field.Invalid(p.Child("disk", "pciAddress"), spec.Disk.PciAddress, "only a virtio disk has a PCI address of its own"))
			return false
		}
		addr, ok := c.pciAddress(p.Child("disk", "pciAddress"), spec.Disk.PciAddress)
		if !ok {
			return false
		}
		disk.Address = addr
	}
	return true
}

var pciAddressRE = regexp.MustCompile(`^([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$`)

// pciAddress parses KubeVirt's DDDD:BB:SS.F form.
func (c *converter) pciAddress(p *field.Path, s string) (*libvirtxml.DomainAddress, bool) {
	m := pciAddressRE.FindStringSubmatch(s)
	if m == nil {
		c.fail(field.Invalid(p, s, "must be a PCI address such as 0000:81:01.0"))
		return nil, false
	}
	parts := make([]uint, 4)
	for i := range parts {
		n, _ := strconv.ParseUint(m[i+1], 16, 16)
		parts[i] = uint(n)
	}
	if parts[2] > 31 {
		c.fail(field.Invalid(p, s, "the slot must be at most 1f"))
		return nil, false
	}
	return &libvirtxml.DomainAddress{PCI: &libvirtxml.DomainAddressPCI{Domain: &parts[0], Bus: &parts[1], Slot: &parts[2], Function: &parts[3]}}, true
}

// ioThreads gives virtio disks QEMU I/O threads: with ioThreadsPolicy shared one thread for
// all, with auto (or supplementalPool) a pool of up to two per vCPU shared round-robin; a
// dedicatedIOThread disk gets one of its own either way. It returns the number of threads.
func (c *converter) ioThreads(disks []libvirtxml.DomainDisk) uint {
	policy := c.vmi.Spec.Domain.IOThreadsPolicy
	dedicated := map[string]bool{}
	for _, d := range c.vmi.Spec.Domain.Devices.Disks {
		if ptr.Deref(d.DedicatedIOThread, false) {
			dedicated[diskAlias(d.Name).Name] = true
		}
	}
	var pooled, own []*libvirtxml.DomainDisk
	for i := range disks {
		d := &disks[i]
		switch {
		case d.Target.Bus != string(v1.DiskBusVirtio) || d.Alias == nil:
		case dedicated[d.Alias.Name]:
			own = append(own, d)
		case policy != nil:
			pooled = append(pooled, d)
		}
	}
	pool := uint(1)
	if policy != nil && *policy != v1.IOThreadsPolicyShared {
		pool = 2 * c.vcpus()
		if t := c.vmi.Spec.Domain.IOThreads; t != nil && t.SupplementalPoolThreadCount != nil && *t.SupplementalPoolThreadCount > 0 {
			pool = uint(*t.SupplementalPoolThreadCount)
		}
	}
	pool = min(pool, uint(len(pooled)))
	for k, d := range pooled {
		id := 1 + uint(k)%pool
		d.Driver.IOThread = &id
	}
	for k, d := range own {
		id := pool + 1 + uint(k)
		d.Driver.IOThread = &id
	}
	return pool + uint(len(own))
}

// DiskAliasPrefix names a disk's libvirt alias after its spec name (ua-: a user alias), which
// ties the live device back to the spec (the handler's metrics name drives by it).
const DiskAliasPrefix = "ua-"

func diskAlias(name string) *libvirtxml.DomainAlias {
	return &libvirtxml.DomainAlias{Name: DiskAliasPrefix + name}
}

// vcpus is the guest's vCPU count.
func (c *converter) vcpus() uint {
	return uint(min(c.vmi.Spec.Domain.VCPUs(), maxVCPUs))
}

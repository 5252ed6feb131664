package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// diskSerialRE is what libvirt accepts in <serial> of a disk.
var diskSerialRE = regexp.MustCompile(`^[A-Za-z0-9_ .+-]*$`)

// disks turns spec disks into libvirt disks in spec order, naming targets the way the
// guest kernel will (vda, vdb, ... for virtio; sda, ... for SATA and SCSI, which share the
// sd namespace in libvirt), and adds the virtio-scsi controller SCSI disks need (libvirt's
// default SCSI controller for x86 is an LSI model no current guest should depend on).
func (c *converter) disks() ([]libvirtxml.DomainController, []libvirtxml.DomainDisk) {
	volumes := c.volumeIndex()
	disksPath := domainPath.Child("devices", "disks")
	seen := map[string]bool{}
	counters := map[string]int{}
	var out []libvirtxml.DomainDisk
	var controllers []libvirtxml.DomainController
	for i := range c.vmi.Spec.Domain.Devices.Disks {
		spec := &c.vmi.Spec.Domain.Devices.Disks[i]
		p := disksPath.Index(i)
		if spec.Name == "" {
			c.fail(field.Required(p.Child("name"), "a disk needs the name of its volume"))
			continue
		}
		if seen[spec.Name] {
			c.fail(field.Duplicate(p.Child("name"), spec.Name))
			continue
		}
		seen[spec.Name] = true
		disk, ok := c.device(p, spec)
		if !ok {
			continue
		}
		vi, found := volumes[spec.Name]
		if !found {
			c.fail(field.Invalid(p.Child("name"), spec.Name, "no volume of this name in spec.volumes"))
			continue
		}
		if !c.source(vi, &disk) || !c.diskOptions(p, spec, &disk) {
			continue
		}
		disk.Alias = diskAlias(spec.Name)
		if disk.ReadOnly != nil && disk.Device == "disk" && disk.Target.Bus == string(v1.DiskBusSATA) {
			c.fail(field.Invalid(p, spec.Name, "a read-only disk cannot be on the sata bus (QEMU's SATA disks cannot be read-only): use virtio or scsi, or a cdrom"))
			continue
		}
		prefix := "sd"
		if disk.Target.Bus == string(v1.DiskBusVirtio) {
			prefix = "vd"
		}
		disk.Target.Dev = prefix + diskLetters(counters[prefix])
		counters[prefix]++
		if disk.Target.Bus == string(v1.DiskBusSCSI) && len(controllers) == 0 {
			controllers = append(controllers, libvirtxml.DomainController{Type: "scsi", Index: new(uint), Model: "virtio-scsi"})
		}
		if spec.BootOrder != nil {
			if !c.bootOrder(p.Child("bootOrder"), *spec.BootOrder) {
				continue
			}
			disk.Boot = &libvirtxml.DomainDeviceBoot{Order: *spec.BootOrder}
		}
		if spec.Serial != "" {
			if !diskSerialRE.MatchString(spec.Serial) {
				c.fail(field.Invalid(p.Child("serial"), spec.Serial, "may only contain letters, digits, spaces and _ . + -"))
				continue
			}
			disk.Serial = spec.Serial
		}
		out = append(out, disk)
	}
	return controllers, out
}

// device is the disk's kind, bus and read-only flag, with the defaults defaults.go applies
// (virtio disk, read-only SATA cdrom) for specs that were not defaulted.
func (c *converter) device(p *field.Path, spec *v1.Disk) (libvirtxml.DomainDisk, bool) {
	switch {
	case spec.Disk != nil && spec.CDRom != nil:
		c.fail(field.Invalid(p, spec.Name, "must set at most one of disk and cdrom"))
		return libvirtxml.DomainDisk{}, false
	case spec.CDRom != nil:
		bus := spec.CDRom.Bus
		if bus == "" {
			bus = v1.DiskBusSATA
		}
		// A CD-ROM needs an ejectable-media device: QEMU has none on virtio-blk.
		if bus != v1.DiskBusSATA && bus != v1.DiskBusSCSI {
			c.fail(field.NotSupported(p.Child("cdrom", "bus"), bus, []v1.DiskBus{v1.DiskBusSATA, v1.DiskBusSCSI}))
			return libvirtxml.DomainDisk{}, false
		}
		if spec.CDRom.ReadOnly != nil && !*spec.CDRom.ReadOnly {
			c.fail(field.Invalid(p.Child("cdrom", "readonly"), false, "a CD-ROM is always read-only"))
			return libvirtxml.DomainDisk{}, false
		}
		return libvirtxml.DomainDisk{Device: "cdrom", Target: &libvirtxml.DomainDiskTarget{Bus: string(bus)}, ReadOnly: &libvirtxml.DomainDiskReadOnly{}}, true
	default:
		bus, readOnly := v1.DefaultDiskBus, false
		if spec.Disk != nil {
			readOnly = spec.Disk.ReadOnly
			if spec.Disk.Bus != "" {
				bus = spec.Disk.Bus
			}
		}
		if bus != v1.DiskBusVirtio && bus != v1.DiskBusSATA && bus != v1.DiskBusSCSI {
			c.fail(field.NotSupported(p.Child("disk", "bus"), bus, []v1.DiskBus{v1.DiskBusVirtio, v1.DiskBusSATA, v1.DiskBusSCSI}))
			return libvirtxml.DomainDisk{}, false
		}
		d := libvirtxml.DomainDisk{Device: "disk", Target: &libvirtxml.DomainDiskTarget{Bus: string(bus)}}
		if readOnly {
			d.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
		}
		return d, true
	}
}

type volumeRef struct {
	index int
	vol   *v1.Volume
}

// volumeIndex maps volume names to volumes, reporting duplicates (a disk could not say which
// one it means).
func (c *converter) volumeIndex() map[string]volumeRef {
	out := map[string]volumeRef{}
	for i := range c.vmi.Spec.Volumes {
		vol := &c.vmi.Spec.Volumes[i]
		if _, dup := out[vol.Name]; dup {
			c.fail(field.Duplicate(specPath.Child("volumes").Index(i).Child("name"), vol.Name))
			continue
		}
		out[vol.Name] = volumeRef{index: i, vol: vol}
	}
	return out
}

// source fills the disk's file or device and format from what the node resolved for the
// volume; a file (block) source is what makes libvirtxml write type="file" ("block").
// diskVolumeKinds are the volume sources the node turns into a disk image.
var diskVolumeKinds = []string{"containerDisk", "cloudInitNoCloud", "cloudInitConfigDrive", "emptyDisk", "persistentVolumeClaim",
	"ephemeral", "configMap", "secret", "serviceAccount", "downwardAPI", "sysprep", "hostDisk", "downwardMetrics"}

func (c *converter) source(ref volumeRef, disk *libvirtxml.DomainDisk) bool {
	p := specPath.Child("volumes").Index(ref.index)
	src := &ref.vol.VolumeSource
	if kinds := src.SourceKinds(); len(kinds) != 1 || !slices.Contains(diskVolumeKinds, kinds[0]) {
		c.fail(field.Invalid(p, ref.vol.Name, fmt.Sprintf("must set exactly one supported volume source (%s), found %v", strings.Join(diskVolumeKinds, ", "), kinds)))
		return false
	}
	host := c.env.Volumes[ref.vol.Name]
	path := c.hostFile(p, host.Path, "disk image")
	if path == "" {
		return false
	}
	format := host.Format
	if format == "" {
		format = "raw"
	}
	if format != "raw" && format != "qcow2" {
		c.fail(field.Invalid(p, format, "the node resolved an image format other than raw or qcow2"))
		return false
	}
	// The guest reads the metrics disk; only the launcher writes it.
	if (src.PersistentVolumeClaim != nil && src.PersistentVolumeClaim.ReadOnly) || src.DownwardMetrics != nil {
		disk.ReadOnly = &libvirtxml.DomainDiskReadOnly{}
	}
	if src.Ephemeral != nil {
		if host.Block {
			c.fail(field.Invalid(p.Child("ephemeral"), ref.vol.Name, "the claim is block-mode: an ephemeral volume's overlay is a file next to its image, which needs a claim with a file system (volumeMode: Filesystem)"))
			return false
		}
		// libvirt puts a copy-on-write overlay over the claim's image for the domain's life
		// and deletes it after: the guest's writes never reach the claim.
		disk.Transient = &libvirtxml.DomainDiskTransient{}
	}
	disk.Driver = &libvirtxml.DomainDiskDriver{Name: "qemu", Type: format}
	if host.Block {
		disk.Source = &libvirtxml.DomainDiskSource{Block: &libvirtxml.DomainDiskSourceBlock{Dev: path}}
		return true
	}
	disk.Source = &libvirtxml.DomainDiskSource{File: &libvirtxml.DomainDiskSourceFile{File: path}}
	return true
}

// diskLetters is the Linux sd/vd suffix of the n-th disk: a..z, aa..az, ba..
func diskLetters(n int) string {
	s := ""
	for n++; n > 0; n = (n - 1) / 26 {
		s = string(rune('a'+(n-1)%26)) + s
	}
	return s
}

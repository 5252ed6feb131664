package admission

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// diskBusOptions: the options a disk's bus must support (the node checks them too, in
// handler/domain), so the user hears of a mismatch when writing the object rather than from
// a Failed instance. The bus is the defaulted one; an empty bus is left to the node.
func diskBusOptions(path *field.Path, disks []v1.Disk) field.ErrorList {
	var errs field.ErrorList
	for i, d := range disks {
		if d.Disk == nil || d.Disk.Bus == "" {
			continue
		}
		p := path.Index(i).Child("disk")
		virtio := d.Disk.Bus == v1.DiskBusVirtio
		if d.Disk.SolidState && virtio {
			errs = append(errs, field.Invalid(p.Child("solidState"), true, "only a scsi or sata disk can be solid-state: virtio-blk has no rotation rate"))
		}
		if d.Disk.PciAddress != "" && !virtio {
			errs = append(errs, field.Invalid(p.Child("pciAddress"), d.Disk.PciAddress, "only a virtio disk has a PCI address of its own"))
		}
	}
	return errs
}

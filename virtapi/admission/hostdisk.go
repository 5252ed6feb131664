package admission

import (
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// HostDiskGate is KubeVirt's feature gate for hostDisk volumes (virt-api --feature-gates).
// It is off by default, as in KubeVirt: a hostDisk gives whoever may create an instance a
// file of the node's, outside any storage quota.
const HostDiskGate = "HostDisk"

// hostDisks refuses hostDisk volumes unless the gate is on, and otherwise what the node could
// not honour: a path that is not an absolute, clean path to a file (the launcher pod mounts
// its directory), an unknown type, and a capacity missing for DiskOrCreate or given for Disk.
func hostDisks(p *field.Path, volumes []v1.Volume, limits Limits) field.ErrorList {
	var errs field.ErrorList
	for i, vol := range volumes {
		hd := vol.HostDisk
		if hd == nil {
			continue
		}
		vp := p.Index(i).Child("hostDisk")
		if !limits.HostDisk {
			errs = append(errs, field.Forbidden(vp, "host disks need the HostDisk feature gate, which this cluster has not enabled (virt-api --feature-gates=HostDisk): use a persistentVolumeClaim"))
			continue
		}
		switch {
		case hd.Path == "":
			errs = append(errs, field.Required(vp.Child("path"), "the disk image's absolute path on the node"))
		case !path.IsAbs(hd.Path) || path.Clean(hd.Path) != hd.Path || path.Dir(hd.Path) == hd.Path:
			errs = append(errs, field.Invalid(vp.Child("path"), hd.Path, "must be an absolute, clean path to a file (no trailing /, no . or .. elements)"))
		}
		switch hd.Type {
		case v1.HostDiskExists:
			if !hd.Capacity.IsZero() {
				errs = append(errs, field.Invalid(vp.Child("capacity"), hd.Capacity.String(), "must not be set when type is Disk: the image exists and has its size"))
			}
		case v1.HostDiskExistsOrCreate:
			if hd.Capacity.Sign() <= 0 {
				errs = append(errs, field.Required(vp.Child("capacity"), "the size of the image to create when type is DiskOrCreate"))
			}
		default:
			errs = append(errs, field.NotSupported(vp.Child("type"), hd.Type, []string{v1.HostDiskExists, v1.HostDiskExistsOrCreate}))
		}
	}
	return errs
}

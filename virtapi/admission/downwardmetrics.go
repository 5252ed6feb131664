package admission

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// DownwardMetricsGate is KubeVirt's feature gate for downward metrics (virt-api
// --feature-gates). Off by default, as in KubeVirt: it shows every guest that asks the
// node's name, memory and CPU time.
const DownwardMetricsGate = "DownwardMetrics"

const downwardMetricsNeedsGate = "downward metrics need the DownwardMetrics feature gate, which this cluster has not enabled (virt-api --feature-gates=DownwardMetrics)"

// downwardMetrics refuses the device and the volume without the gate; with it, at most one
// volume, which a disk (not a cdrom or lun) shows the guest, read-only and so not on SATA.
func downwardMetrics(path *field.Path, spec *v1.VirtualMachineInstanceSpec, limits Limits) field.ErrorList {
	var errs field.ErrorList
	if spec.DownwardMetricsPort() && !limits.DownwardMetrics {
		errs = append(errs, field.Forbidden(path.Child("domain", "devices", "downwardMetrics"), downwardMetricsNeedsGate))
	}
	volumes := 0
	for i, vol := range spec.Volumes {
		if vol.DownwardMetrics == nil {
			continue
		}
		p := path.Child("volumes").Index(i).Child("downwardMetrics")
		if !limits.DownwardMetrics {
			errs = append(errs, field.Forbidden(p, downwardMetricsNeedsGate))
			continue
		}
		if volumes++; volumes > 1 {
			errs = append(errs, field.Forbidden(p, "only one downwardMetrics volume: they would all show the same disk"))
		}
		for j, disk := range spec.Domain.Devices.Disks {
			if disk.Name != vol.Name {
				continue
			}
			dp := path.Child("domain", "devices", "disks").Index(j)
			switch {
			case disk.CDRom != nil:
				errs = append(errs, field.Invalid(dp.Child("cdrom"), vol.Name, "a downwardMetrics volume is a disk: use disk"))
			case disk.LUN != nil:
				errs = append(errs, field.Invalid(dp.Child("lun"), vol.Name, "a downwardMetrics volume is a disk: use disk"))
			case disk.Disk != nil && disk.Disk.Bus == v1.DiskBusSATA:
				errs = append(errs, field.Invalid(dp.Child("disk", "bus"), disk.Disk.Bus, "a downwardMetrics disk is read-only, which QEMU's SATA disks cannot be: use virtio or scsi"))
			}
		}
	}
	return errs
}

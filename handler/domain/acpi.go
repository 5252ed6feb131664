package domain

import (
	"path"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"libvirt.org/go/libvirtxml"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// acpiFile is where the compute container has a table: in its secret volume's mount.
func acpiFile(t v1.ACPITable) string { return path.Join(layout.ConfigVolumesDir, t.Volume, t.Key) }

var acpiPath = domainPath.Child("firmware", "acpi")

// acpiTables add the instance's SLIC and MSDM tables to the guest's. libvirt (9.0 here)
// knows SLIC; MSDM, which Windows 8 and later read their product key from, goes to QEMU's
// -acpitable directly (the arguments returned), which takes a whole table from a file as
// libvirt's SLIC does.
func (c *converter) acpiTables(os *libvirtxml.DomainOS) []libvirtxml.DomainQEMUCommandlineArg {
	if fw := c.vmi.Spec.Domain.Firmware; fw == nil || fw.ACPI == nil {
		return nil
	}
	tables := v1.ACPITables(&c.vmi.Spec)
	if len(tables) == 0 {
		c.fail(field.Required(acpiPath, "slicNameRef or msdmNameRef: the secret volume holding the table"))
		return nil
	}
	var args []libvirtxml.DomainQEMUCommandlineArg
	for _, t := range tables {
		if !c.secretVolume(t.Volume) {
			c.fail(field.Invalid(acpiPath.Child(t.Field), t.Volume, "must name a secret volume in spec.volumes"))
			continue
		}
		switch t.Signature {
		case "SLIC":
			os.ACPI = &libvirtxml.DomainACPI{Tables: []libvirtxml.DomainACPITable{{Type: "slic", Path: acpiFile(t)}}}
		default:
			args = append(args, libvirtxml.DomainQEMUCommandlineArg{Value: "-acpitable"},
				libvirtxml.DomainQEMUCommandlineArg{Value: "sig=" + t.Signature + ",file=" + acpiFile(t)})
		}
	}
	return args
}

func (c *converter) secretVolume(name string) bool {
	for _, v := range c.vmi.Spec.Volumes {
		if v.Name == name {
			return v.Secret != nil
		}
	}
	return false
}

package admission

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// acpiTables: spec.domain.firmware.acpi names at least one table, and each name is a secret
// volume of the instance, as in KubeVirt (the table is that secret's slic.bin or msdm.bin).
func acpiTables(p *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	fw := spec.Domain.Firmware
	if fw == nil || fw.ACPI == nil {
		return nil
	}
	tables := v1.ACPITables(spec)
	if len(tables) == 0 {
		return field.ErrorList{field.Required(p, "slicNameRef or msdmNameRef: the secret volume holding the table")}
	}
	var errs field.ErrorList
	for _, t := range tables {
		i := slices.IndexFunc(spec.Volumes, func(v v1.Volume) bool { return v.Name == t.Volume })
		switch {
		case i < 0:
			e := field.NotFound(p.Child(t.Field), t.Volume)
			e.Detail = "does not have a matching volume in spec.volumes"
			errs = append(errs, e)
		case spec.Volumes[i].Secret == nil:
			errs = append(errs, field.Invalid(p.Child(t.Field), t.Volume, "must name a secret volume: the table is its secret's "+t.Key))
		}
	}
	return errs
}

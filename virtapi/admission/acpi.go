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
	if fw.ACPI.SlicNameRef == "" && fw.ACPI.MsdmNameRef == "" {
		return field.ErrorList{field.Required(p, "slicNameRef or msdmNameRef: the secret volume holding the table")}
	}
	var errs field.ErrorList
	for _, t := range []struct{ field, ref, key string }{
		{"slicNameRef", fw.ACPI.SlicNameRef, "slic.bin"},
		{"msdmNameRef", fw.ACPI.MsdmNameRef, "msdm.bin"},
	} {
		if t.ref == "" {
			continue
		}
		name, ref := t.field, t.ref
		i := slices.IndexFunc(spec.Volumes, func(v v1.Volume) bool { return v.Name == ref })
		switch {
		case i < 0:
			e := field.NotFound(p.Child(name), ref)
			e.Detail = "does not have a matching volume in spec.volumes"
			errs = append(errs, e)
		case spec.Volumes[i].Secret == nil:
			errs = append(errs, field.Invalid(p.Child(name), ref, "must name a secret volume: the table is its secret's "+t.key))
		}
	}
	return errs
}

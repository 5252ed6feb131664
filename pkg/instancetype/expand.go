package instancetype

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// templateSpecPath is where a VirtualMachine's instance spec sits: conflicts are named there.
var templateSpecPath = field.NewPath("spec", "template", "spec")

// Expand is the template a VirtualMachine with an instance type and/or a preference (either
// may be nil) runs: a copy of tmpl with both applied. The errors are what stops it: a spread
// topology the vCPUs cannot fill, an instance type smaller than the preference requires, and
// template fields the instance type also sets.
func Expand(tmpl *v1.VirtualMachineInstanceTemplateSpec, it *itv1beta1.VirtualMachineInstancetypeSpec,
	pref *itv1beta1.VirtualMachinePreferenceSpec) (*v1.VirtualMachineInstanceTemplateSpec, field.ErrorList) {
	out := tmpl.DeepCopy()
	if err := CheckSpread(it, pref); err != nil {
		return nil, field.ErrorList{err}
	}
	if errs := CheckRequirements(it, pref, &tmpl.Spec); len(errs) > 0 {
		return nil, errs
	}
	if c := Apply(templateSpecPath, it, pref, &out.Spec, &out.ObjectMeta); len(c) > 0 {
		return nil, c.ErrorList()
	}
	return out, nil
}

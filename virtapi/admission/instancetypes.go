package admission

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

var (
	instancetypeKinds = []string{v1.InstancetypeKind, v1.ClusterInstancetypeKind}
	preferenceKinds   = []string{v1.PreferenceKind, v1.ClusterPreferenceKind}
)

// ExpandVM is the template a VM naming an instance type or a preference will run (both
// expanded, as virt-controller will), so the rest of the validation checks what the instance
// gets; or, when that cannot be known, why. As KubeVirt does, a VM naming an instance type or
// preference that does not exist is refused, and so is a template setting what the instance
// type sets (a conflict, naming the field).
func ExpandVM(vm *v1.VirtualMachine, g instancetype.Getter) (*v1.VirtualMachineInstanceTemplateSpec, field.ErrorList) {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if m := vm.Spec.Instancetype; m != nil {
		errs = append(errs, matcherErrors(spec.Child("instancetype"), m.Name, m.Kind, m.InferFromVolume, v1.InstancetypeKindOf(m.Kind), instancetypeKinds)...)
	}
	if m := vm.Spec.Preference; m != nil {
		errs = append(errs, matcherErrors(spec.Child("preference"), m.Name, m.Kind, m.InferFromVolume, v1.PreferenceKindOf(m.Kind), preferenceKinds)...)
	}
	if len(errs) > 0 || vm.Spec.Template == nil {
		return nil, errs
	}
	if g == nil {
		return nil, field.ErrorList{field.InternalError(spec.Child("instancetype"), errors.New("virt-api was started without access to instance types"))}
	}
	var found [2]*instancetype.Object
	if vm.Spec.Instancetype != nil {
		o, err := instancetype.InstancetypeForVM(g, vm)
		if err != nil {
			errs = append(errs, notFound(spec.Child("instancetype"), vm.Spec.Instancetype.Name, "instancetype", err))
		}
		found[0] = o
	}
	if vm.Spec.Preference != nil {
		o, err := instancetype.PreferenceForVM(g, vm)
		if err != nil {
			errs = append(errs, notFound(spec.Child("preference"), vm.Spec.Preference.Name, "preference", err))
		}
		found[1] = o
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var it *itv1beta1.VirtualMachineInstancetypeSpec
	var pref *itv1beta1.VirtualMachinePreferenceSpec
	if found[0] != nil {
		it = found[0].Instancetype
	}
	if found[1] != nil {
		pref = found[1].Preference
	}
	return instancetype.Expand(vm.Spec.Template, it, pref)
}

// matcherErrors: a name (inferring from a volume is not offered) and a known kind.
func matcherErrors(p *field.Path, name, kind, infer, normalized string, kinds []string) field.ErrorList {
	var errs field.ErrorList
	if name == "" && infer != "" {
		errs = append(errs, field.Invalid(p.Child("inferFromVolume"), infer,
			fmt.Sprintf("inferring from a volume is not supported here: set %s (or inferFromVolumeFailurePolicy: Ignore to run without it)", p.Child("name"))))
	}
	if normalized == "" {
		errs = append(errs, field.NotSupported(p.Child("kind"), kind, kinds))
	}
	return errs
}

// notFound is KubeVirt's refusal of a matcher whose object cannot be read.
func notFound(p *field.Path, name, what string, err error) *field.Error {
	e := field.NotFound(p, name)
	e.Detail = fmt.Sprintf("Failure to find %s: %v", what, err)
	return e
}

// dropIgnoredInference: a matcher that only infers from a volume, with failure policy
// Ignore, is removed, as KubeVirt removes it when inference fails (here it always would).
func dropIgnoredInference(vm *v1.VirtualMachine) []PatchOp {
	var ops []PatchOp
	ignored := func(name, infer string, policy *v1.InferFromVolumeFailurePolicy) bool {
		return name == "" && infer != "" && policy != nil && *policy == v1.IgnoreInferFromVolumeFailure
	}
	if m := vm.Spec.Instancetype; m != nil && ignored(m.Name, m.InferFromVolume, m.InferFromVolumeFailurePolicy) {
		ops = append(ops, PatchOp{Op: "remove", Path: "/spec/instancetype"})
		vm.Spec.Instancetype = nil
	}
	if m := vm.Spec.Preference; m != nil && ignored(m.Name, m.InferFromVolume, m.InferFromVolumeFailurePolicy) {
		ops = append(ops, PatchOp{Op: "remove", Path: "/spec/preference"})
		vm.Spec.Preference = nil
	}
	return ops
}

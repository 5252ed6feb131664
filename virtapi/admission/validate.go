package admission

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	apivalidation "github.com/vmctl/vmctl/api/kubevirt/v1/validation"
)

// RunningDeprecated is the warning every write of a VM with spec.running gets.
const RunningDeprecated = "spec.running is deprecated; use spec.runStrategy (true is Always, false is Halted)"

// rawSpec digs the instance spec's JSON out of an object's JSON along keys, for the checks
// that must see what was sent rather than what the Go types kept.
func rawSpec(raw []byte, keys ...string) json.RawMessage {
	cur := json.RawMessage(raw)
	for _, k := range keys {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// ValidateVM checks a VirtualMachine. A VM that will not run (Halted) may name disks with no
// volume, with a warning: KubeVirt's own documented example does, and must apply; it is
// refused once it is asked to run, as its instance could not start.
//
// A VM naming an instance type or preference is checked as it will run, with both expanded
// into its template (instancetypes.go); one whose instance type is missing or conflicts with
// its template is refused without further checks.
func ValidateVM(vm *v1.VirtualMachine, raw []byte, limits Limits) (field.ErrorList, []string) {
	spec := field.NewPath("spec")
	var warnings []string
	if vm.Spec.Running != nil {
		warnings = append(warnings, RunningDeprecated)
	}
	if vm.Spec.NamesInstancetypeOrPreference() {
		expanded, errs := ExpandVM(vm, limits.Instancetypes)
		if len(errs) > 0 {
			return append(errs, instanceName(field.NewPath("metadata", "name"), vm.Name, 0)...), warnings
		}
		if expanded != nil {
			vm = vm.DeepCopy()
			vm.Spec.Template = expanded
		}
	}
	errs := apivalidation.ValidateVirtualMachineSpec(spec, &vm.Spec)
	errs = append(errs, instanceName(field.NewPath("metadata", "name"), vm.Name, 0)...)
	errs = append(errs, unsupportedVM(spec, vm)...)
	if vm.Spec.Template != nil {
		errs = append(errs, hookSidecars(spec.Child("template", "metadata", "annotations"), vm.Spec.Template.ObjectMeta.Annotations, limits)...)
	}
	if vm.Spec.Template == nil {
		return errs, warnings
	}
	strategy, _ := vm.Spec.EffectiveRunStrategy()
	runs := strategy != v1.RunStrategyHalted
	tpl := spec.Child("template", "spec")
	errs = append(errs, validateInstanceSpec(tpl, &vm.Spec.Template.Spec, rawSpec(raw, "spec", "template", "spec"), runs, limits)...)
	if !runs {
		for _, e := range disksWithoutVolume(tpl, &vm.Spec.Template.Spec) {
			warnings = append(warnings, fmt.Sprintf("%s; the VM cannot start until this is fixed", e.Error()))
		}
	}
	return dedupe(errs), warnings
}

// ValidateVMI checks a new VirtualMachineInstance (updates: ValidateVMIUpdate).
func ValidateVMI(vmi *v1.VirtualMachineInstance, raw []byte, limits Limits) field.ErrorList {
	errs := instanceName(field.NewPath("metadata", "name"), vmi.Name, 0)
	errs = append(errs, hookSidecars(field.NewPath("metadata", "annotations"), vmi.Annotations, limits)...)
	return dedupe(append(errs, validateInstanceSpec(field.NewPath("spec"), &vmi.Spec, rawSpec(raw, "spec"), true, limits)...))
}

// ValidateVMIRS checks a VirtualMachineInstanceReplicaSet.
func ValidateVMIRS(rs *v1.VirtualMachineInstanceReplicaSet, raw []byte, limits Limits) field.ErrorList {
	spec := field.NewPath("spec")
	errs := apivalidation.ValidateReplicaSetSpec(spec, &rs.Spec)
	errs = append(errs, instanceName(field.NewPath("metadata", "name"), rs.Name, replicaSuffixLen)...)
	if rs.Spec.Template != nil {
		errs = append(errs, hookSidecars(spec.Child("template", "metadata", "annotations"), rs.Spec.Template.ObjectMeta.Annotations, limits)...)
		errs = append(errs, validateInstanceSpec(spec.Child("template", "spec"), &rs.Spec.Template.Spec, rawSpec(raw, "spec", "template", "spec"), true, limits)...)
	}
	return dedupe(errs)
}

// dedupe drops errors reported twice (the shared spec validation runs inside the VM's and
// the replica set's validation, and again in validateInstanceSpec).
func dedupe(errs field.ErrorList) field.ErrorList {
	seen := map[string]bool{}
	var out field.ErrorList
	for _, e := range errs {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

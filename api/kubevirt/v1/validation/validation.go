// Package validation checks kubevirt.io/v1 objects and names each offending field, for the
// admission webhook and for controllers that must not act on an invalid spec. The CRD's CEL
// rules enforce the same essentials server-side with the same messages.
package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

var runStrategies = []v1.VirtualMachineRunStrategy{
	v1.RunStrategyAlways, v1.RunStrategyRerunOnFailure, v1.RunStrategyManual, v1.RunStrategyHalted, v1.RunStrategyOnce,
}

// ValidateVirtualMachineSpec checks a VirtualMachine's spec.
func ValidateVirtualMachineSpec(path *field.Path, spec *v1.VirtualMachineSpec) field.ErrorList {
	var errs field.ErrorList
	if spec.Running != nil && spec.RunStrategy != nil {
		errs = append(errs, field.Forbidden(path.Child("running"), v1.ErrRunningAndRunStrategy.Error()))
	}
	if spec.RunStrategy != nil && !isRunStrategy(*spec.RunStrategy) {
		errs = append(errs, field.NotSupported(path.Child("runStrategy"), *spec.RunStrategy, runStrategies))
	}
	if spec.Template == nil {
		return append(errs, field.Required(path.Child("template"), "a VirtualMachine needs a template"))
	}
	return append(errs, ValidateVirtualMachineInstanceSpec(path.Child("template", "spec"), &spec.Template.Spec)...)
}

func isRunStrategy(s v1.VirtualMachineRunStrategy) bool {
	for _, known := range runStrategies {
		if s == known {
			return true
		}
	}
	return false
}

// ValidateVirtualMachineInstanceSpec checks an instance's spec.
func ValidateVirtualMachineInstanceSpec(path *field.Path, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	errs := validateMemory(path.Child("domain"), &spec.Domain)
	if spec.TerminationGracePeriodSeconds != nil && *spec.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *spec.TerminationGracePeriodSeconds, "must not be negative"))
	}
	return append(errs, validateVolumes(path.Child("volumes"), spec.Volumes)...)
}

func validateMemory(path *field.Path, domain *v1.DomainSpec) field.ErrorList {
	var errs field.ErrorList
	requests, hasRequest := domain.Resources.Requests["memory"]
	limits, hasLimit := domain.Resources.Limits["memory"]
	hasGuest := domain.Memory != nil && domain.Memory.Guest != nil
	if !hasRequest && !hasLimit && !hasGuest {
		return append(errs, field.Required(path.Child("resources", "requests", "memory"),
			"no memory requested: set spec.domain.memory.guest, spec.domain.resources.requests.memory or spec.domain.resources.limits.memory"))
	}
	positive := func(p *field.Path, q resource.Quantity) {
		if q.Sign() <= 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must be greater than zero"))
		}
	}
	if hasRequest {
		positive(path.Child("resources", "requests", "memory"), requests)
	}
	if hasLimit {
		positive(path.Child("resources", "limits", "memory"), limits)
	}
	if hasGuest {
		positive(path.Child("memory", "guest"), *domain.Memory.Guest)
	}
	if hasRequest && hasLimit && requests.Cmp(limits) > 0 {
		errs = append(errs, field.Invalid(path.Child("resources", "requests", "memory"), requests.String(),
			fmt.Sprintf("must not be greater than spec.domain.resources.limits.memory (%s)", limits.String())))
	}
	return errs
}

func validateVolumes(path *field.Path, volumes []v1.Volume) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, vol := range volumes {
		p := path.Index(i)
		if seen[vol.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), vol.Name))
		}
		seen[vol.Name] = true
		if vol.Ephemeral != nil && vol.Ephemeral.PersistentVolumeClaim == nil {
			errs = append(errs, field.Required(p.Child("ephemeral", "persistentVolumeClaim"), "an ephemeral volume wraps a persistentVolumeClaim"))
		}
		if s := vol.Sysprep; s != nil && s.ConfigMap == nil && s.Secret == nil {
			errs = append(errs, field.Required(p.Child("sysprep"), "a configMap or a secret that holds the answer file"))
		} else if s != nil && s.ConfigMap != nil && s.Secret != nil {
			errs = append(errs, field.Forbidden(p.Child("sysprep"), "set configMap or secret, not both"))
		}
		if n := len(vol.SourceKinds()); n != 1 {
			errs = append(errs, field.Invalid(p, vol.Name, fmt.Sprintf("must set exactly one volume source, found %d", n)))
		}
	}
	return errs
}

// ValidateReplicaSetSpec checks a VirtualMachineInstanceReplicaSet's spec.
func ValidateReplicaSetSpec(path *field.Path, spec *v1.VirtualMachineInstanceReplicaSetSpec) field.ErrorList {
	var errs field.ErrorList
	if spec.Replicas != nil && *spec.Replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), *spec.Replicas, "must not be negative"))
	}
	if spec.Template == nil {
		return append(errs, field.Required(path.Child("template"), "a replica set needs a template"))
	}
	if spec.Selector == nil {
		return append(errs, field.Required(path.Child("selector"), "a replica set needs a selector"))
	}
	selector, err := metav1.LabelSelectorAsSelector(spec.Selector)
	switch {
	case err != nil:
		errs = append(errs, field.Invalid(path.Child("selector"), spec.Selector, err.Error()))
	case selector.Empty():
		errs = append(errs, field.Invalid(path.Child("selector"), spec.Selector, "must not be empty"))
	case !selector.Matches(labels.Set(spec.Template.ObjectMeta.Labels)):
		errs = append(errs, field.Invalid(path.Child("selector"), spec.Selector, "does not match spec.template.metadata.labels"))
	}
	return append(errs, ValidateVirtualMachineInstanceSpec(path.Child("template", "spec"), &spec.Template.Spec)...)
}

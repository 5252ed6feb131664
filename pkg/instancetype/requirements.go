package instancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// defaultArchitecture is what an instance without spec.architecture runs as here.
const defaultArchitecture = "amd64"

// CheckRequirements refuses an instance type (or, without one, a template) that gives less
// than the preference requires, with KubeVirt's messages. spec is the template as written,
// before expansion.
func CheckRequirements(it *itv1beta1.VirtualMachineInstancetypeSpec, pref *itv1beta1.VirtualMachinePreferenceSpec, spec *v1.VirtualMachineInstanceSpec) field.ErrorList {
	if pref == nil || pref.Requirements == nil {
		return nil
	}
	req := pref.Requirements
	var errs field.ErrorList
	itPath := field.NewPath("spec", "instancetype")
	domain := field.NewPath("spec", "template", "spec", "domain")
	if req.CPU != nil {
		switch {
		case it != nil && it.CPU.Guest < req.CPU.Guest:
			errs = append(errs, field.Invalid(itPath, it.CPU.Guest, fmt.Sprintf(
				"insufficient CPU resources of %d vCPU provided by instance type, preference requires %d vCPU", it.CPU.Guest, req.CPU.Guest)))
		case it == nil:
			if n := templateVCPUs(spec.Domain.CPU); n < req.CPU.Guest {
				errs = append(errs, field.Invalid(domain.Child("cpu"), n, fmt.Sprintf(
					"insufficient CPU resources of %d vCPU provided by VirtualMachine, preference requires %d vCPU", n, req.CPU.Guest)))
			}
		}
	}
	if req.Memory != nil {
		want := req.Memory.Guest
		switch {
		case it != nil && it.Memory.Guest.Cmp(want) < 0:
			errs = append(errs, field.Invalid(itPath, it.Memory.Guest.String(), fmt.Sprintf(
				"insufficient Memory resources of %s provided by instance type, preference requires %s", it.Memory.Guest.String(), want.String())))
		case it == nil:
			if have, ok := templateMemory(&spec.Domain); ok && have.Cmp(want) < 0 {
				errs = append(errs, field.Invalid(domain.Child("memory"), have.String(), fmt.Sprintf(
					"insufficient Memory resources of %s provided by VirtualMachine, preference requires %s", have.String(), want.String())))
			}
		}
	}
	if req.Architecture != nil {
		arch := spec.Architecture
		if arch == "" {
			arch = defaultArchitecture
		}
		if arch != *req.Architecture {
			errs = append(errs, field.Invalid(field.NewPath("spec", "template", "spec", "architecture"), arch,
				fmt.Sprintf("preference requires architecture %s", *req.Architecture)))
		}
	}
	return errs
}

// templateVCPUs is sockets × cores × threads, each 0 counting as 1 as at the node.
func templateVCPUs(cpu *v1.CPU) uint32 {
	if cpu == nil {
		return 1
	}
	n := uint32(1)
	for _, v := range []uint32{cpu.Sockets, cpu.Cores, cpu.Threads} {
		n *= max(v, 1)
	}
	return n
}

// templateMemory is the memory that sizes the guest: memory.guest, else the request, else
// the limit.
func templateMemory(d *v1.DomainSpec) (resource.Quantity, bool) {
	if d.Memory != nil && d.Memory.Guest != nil {
		return *d.Memory.Guest, true
	}
	if q, ok := d.Resources.Requests["memory"]; ok {
		return q, true
	}
	q, ok := d.Resources.Limits["memory"]
	return q, ok
}

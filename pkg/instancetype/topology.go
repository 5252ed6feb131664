package instancetype

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
)

// defaultSpreadRatio is KubeVirt's: two cores per socket (or threads per core).
const defaultSpreadRatio uint32 = 2

// PreferredTopology is the preference's topology with the deprecated spellings mapped to the
// current ones; sockets when there is none.
func PreferredTopology(pref *itv1beta1.VirtualMachinePreferenceSpec) itv1beta1.PreferredCPUTopology {
	t := itv1beta1.Sockets
	if pref != nil && pref.CPU != nil && pref.CPU.PreferredCPUTopology != nil {
		t = *pref.CPU.PreferredCPUTopology
	}
	switch t {
	case itv1beta1.DeprecatedPreferCores:
		return itv1beta1.Cores
	case itv1beta1.DeprecatedPreferSockets:
		return itv1beta1.Sockets
	case itv1beta1.DeprecatedPreferThreads:
		return itv1beta1.Threads
	case itv1beta1.DeprecatedPreferSpread:
		return itv1beta1.Spread
	case itv1beta1.DeprecatedPreferAny:
		return itv1beta1.Any
	}
	return t
}

// spreadOptions are the ratio and levels of the spread topology.
func spreadOptions(pref *itv1beta1.VirtualMachinePreferenceSpec) (uint32, itv1beta1.SpreadAcross) {
	ratio, across := defaultSpreadRatio, itv1beta1.SpreadAcrossSocketsCores
	if pref == nil {
		return ratio, across
	}
	if pref.PreferSpreadSocketToCoreRatio != 0 {
		ratio = pref.PreferSpreadSocketToCoreRatio
	}
	if o := pref.CPU; o != nil && o.SpreadOptions != nil {
		if o.SpreadOptions.Across != nil {
			across = *o.SpreadOptions.Across
		}
		if o.SpreadOptions.Ratio != nil {
			ratio = *o.SpreadOptions.Ratio
		}
	}
	return ratio, across
}

// Topology lays vCPUs out as sockets, cores and threads the way the preference prefers.
// CheckSpread has refused the spreads that do not divide.
func Topology(vCPUs uint32, pref *itv1beta1.VirtualMachinePreferenceSpec) (sockets, cores, threads uint32) {
	sockets, cores, threads = 1, 1, 1
	if vCPUs <= 1 {
		return sockets, cores, threads
	}
	switch PreferredTopology(pref) {
	case itv1beta1.Cores:
		cores = vCPUs
	case itv1beta1.Threads:
		threads = vCPUs
	case itv1beta1.Spread:
		ratio, across := spreadOptions(pref)
		switch across {
		case itv1beta1.SpreadAcrossCoresThreads:
			threads, cores = ratio, vCPUs/ratio
		case itv1beta1.SpreadAcrossSocketsCoresThreads:
			threads, cores, sockets = 2, ratio, vCPUs/2/ratio
		default:
			cores, sockets = ratio, vCPUs/ratio
		}
	default: // sockets, and any: an instance type's vCPUs are sockets
		sockets = vCPUs
	}
	return sockets, cores, threads
}

// CheckSpread refuses a spread topology the instance type's vCPUs cannot fill evenly, as
// KubeVirt does, naming the preference field that asks for it.
func CheckSpread(it *itv1beta1.VirtualMachineInstancetypeSpec, pref *itv1beta1.VirtualMachinePreferenceSpec) *field.Error {
	if it == nil || PreferredTopology(pref) != itv1beta1.Spread {
		return nil
	}
	ratio, across := spreadOptions(pref)
	p := field.NewPath("spec", "preference", "cpu", "spreadOptions")
	vCPUs := it.CPU.Guest
	switch across {
	case itv1beta1.SpreadAcrossCoresThreads:
		if ratio != 2 {
			return field.Invalid(p.Child("ratio"), ratio, "only a ratio of 2 threads per core is supported with across CoresThreads")
		}
	case itv1beta1.SpreadAcrossSocketsCoresThreads:
		if vCPUs%2 != 0 || (vCPUs/2)%ratio != 0 {
			return field.Invalid(p.Child("ratio"), ratio, fmt.Sprintf("the instance type's %d vCPUs do not spread evenly as 2 threads per core and %d cores per socket", vCPUs, ratio))
		}
		return nil
	}
	if ratio == 0 || vCPUs%ratio != 0 {
		return field.Invalid(p.Child("ratio"), ratio, fmt.Sprintf("the instance type's %d vCPUs are not divisible by the spread ratio %d", vCPUs, ratio))
	}
	return nil
}

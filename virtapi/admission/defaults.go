package admission

import (
	"encoding/json"
	"reflect"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// PatchOp is one RFC 6902 operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// NewUUID makes firmware UUIDs; a variable so tests get fixed ones.
var NewUUID = func() types.UID { return types.UID(uuid.NewString()) }

// defaultInstanceSpec applies the API's defaults (api/kubevirt/v1: grace period, guest
// memory, disk bus, pod network) and the machine type: the same function the controller
// applies, so a spec looks the same whether or not it went through the webhook.
func defaultInstanceSpec(spec *v1.VirtualMachineInstanceSpec) {
	v1.SetDefaults_VirtualMachineInstanceSpec(spec)
	v1.SetDefaultMachineType(spec)
}

// DefaultVM defaults a VirtualMachine's template; on create it also gives the VM a random
// firmware UUID, so the guest's system UUID is stable across restarts and unique, and the
// controller need not write one at first start. The template of a VM naming an instance
// type or preference is left undefaulted: a default (disk bus, machine type, grace period,
// guest memory) would beat the preference or conflict with the instance type; the
// controller defaults the instance after expanding them.
func DefaultVM(vm *v1.VirtualMachine, create bool) []PatchOp {
	ops := dropIgnoredInference(vm)
	if vm.Spec.Template == nil {
		return ops
	}
	spec := vm.Spec.Template.Spec.DeepCopy()
	if !vm.Spec.NamesInstancetypeOrPreference() {
		defaultInstanceSpec(spec)
	}
	if create && (spec.Domain.Firmware == nil || spec.Domain.Firmware.UUID == "") {
		if spec.Domain.Firmware == nil {
			spec.Domain.Firmware = &v1.Firmware{}
		}
		spec.Domain.Firmware.UUID = NewUUID()
	}
	return append(ops, diffInstanceSpec("/spec/template/spec", &vm.Spec.Template.Spec, spec)...)
}

// DefaultVMI defaults an instance's spec.
func DefaultVMI(vmi *v1.VirtualMachineInstance) []PatchOp {
	spec := vmi.Spec.DeepCopy()
	defaultInstanceSpec(spec)
	return diffInstanceSpec("/spec", &vmi.Spec, spec)
}

// DefaultVMIRS defaults a replica set's template.
func DefaultVMIRS(rs *v1.VirtualMachineInstanceReplicaSet) []PatchOp {
	if rs.Spec.Template == nil {
		return nil
	}
	spec := rs.Spec.Template.Spec.DeepCopy()
	defaultInstanceSpec(spec)
	return diffInstanceSpec("/spec/template/spec", &rs.Spec.Template.Spec, spec)
}

// diffInstanceSpec patches the members defaulting touches, each whole ("add" replaces an
// existing member): small patches, and no need to know which nested field changed.
func diffInstanceSpec(prefix string, before, after *v1.VirtualMachineInstanceSpec) []PatchOp {
	var ops []PatchOp
	add := func(member string, b, a any) {
		if !reflect.DeepEqual(b, a) {
			ops = append(ops, PatchOp{Op: "add", Path: prefix + "/" + member, Value: a})
		}
	}
	add("terminationGracePeriodSeconds", before.TerminationGracePeriodSeconds, after.TerminationGracePeriodSeconds)
	add("domain", before.Domain, after.Domain)
	add("networks", before.Networks, after.Networks)
	add("architecture", before.Architecture, after.Architecture)
	return ops
}

// marshalPatch is the patch as the AdmissionResponse carries it; nil for no change.
func marshalPatch(ops []PatchOp) ([]byte, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}

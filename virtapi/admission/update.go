package admission

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// VMIUpdateRestricted begins the refusal of an instance spec change, in KubeVirt's words.
const VMIUpdateRestricted = "update of VMI object is restricted"

const vmiUpdateHint = VMIUpdateRestricted + ": an instance's spec is fixed once it is created " +
	"(labels, annotations, finalizers and owner references stay editable); change the " +
	"VirtualMachine's template and restart it, or delete and recreate the instance"

// ValidateVMIUpdate refuses any change of an instance's spec, naming each top-level member
// that changed: the launcher pod and the domain were built from it, and nothing would carry
// a change to the running guest. Metadata is not looked at, and status is a subresource
// whose writes the webhook never sees.
//
// This is a webhook rather than a CEL rule (self == oldSelf) on the CRD because specs are
// compared by meaning, not by bytes: a client that reads an instance into Go types and writes
// it back, as virt-controller does to set its finalizer, sends "1Gi" for a stored "1024Mi"
// and drops explicit empty values ("nodeSelector: {}"), and that is no change.
func ValidateVMIUpdate(old, vmi *v1.VirtualMachineInstance) field.ErrorList {
	var errs field.ErrorList
	for _, member := range changedMembers(&old.Spec, &vmi.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", member), vmiUpdateHint))
	}
	return errs
}

// sameSpec: the specs mean the same: quantities compared by value, an empty list or map
// equal to none.
func sameSpec(a, b *v1.VirtualMachineInstanceSpec) bool {
	return equality.Semantic.DeepEqual(a, b)
}

// changedMembers lists the JSON names of the spec's fields that differ in meaning.
func changedMembers(old, cur *v1.VirtualMachineInstanceSpec) []string {
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	t := ov.Type()
	var out []string
	for i := range t.NumField() {
		if equality.Semantic.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = t.Field(i).Name
		}
		out = append(out, name)
	}
	return out
}

// Package instancetype expands instance types and preferences (instancetype.kubevirt.io)
// into a VirtualMachine's instance, as KubeVirt does: the instance type's fields are the
// instance's and may not be set by the template (a conflict), the preference's fill what the
// template leaves unset. The functions are pure, so virt-api's admission (which refuses
// conflicts) and virt-controller (which renders instances) apply exactly the same rules; the
// ControllerRevisions that pin a VirtualMachine to one copy are built and read here too.
package instancetype

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// conflictFormat is KubeVirt's message, so users and tools that match it see the same text.
const conflictFormat = "VM field(s) %s conflicts with selected instance type"

// Conflicts are the template fields an instance type also sets.
type Conflicts []*field.Path

// ErrorList is one Forbidden error per conflict, each naming its field.
func (c Conflicts) ErrorList() field.ErrorList {
	var errs field.ErrorList
	for _, p := range c {
		errs = append(errs, field.Forbidden(p, strings.Replace(conflictFormat, "%s", p.String(), 1)))
	}
	return errs
}

// Error is KubeVirt's one-line summary of every conflicting field.
func (c Conflicts) Error() string {
	paths := make([]string, 0, len(c))
	for _, p := range c {
		paths = append(paths, p.String())
	}
	return strings.Replace(conflictFormat, "%s", strings.Join(paths, ", "), 1)
}

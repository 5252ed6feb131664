package instancetype

import (
	"fmt"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// InstancetypeForVM is what the VM's instance type matcher stands for: the copy it is pinned
// to (the matcher's revisionName, else status.instancetypeRef's revision while it names the
// same instance type), else the instance type as it is now. Admission checks a VM against
// this, as the controller will expand it.
func InstancetypeForVM(g Getter, vm *v1.VirtualMachine) (*Object, error) {
	m := vm.Spec.Instancetype
	if rev := pinnedRevision(m.RevisionName, vm.Status.InstancetypeRef, m.Name, v1.InstancetypeKindOf(m.Kind)); rev != "" {
		return readRevision(g, vm.Namespace, rev, true)
	}
	return FindInstancetype(g, vm.Namespace, m)
}

// PreferenceForVM is InstancetypeForVM for the preference matcher.
func PreferenceForVM(g Getter, vm *v1.VirtualMachine) (*Object, error) {
	m := vm.Spec.Preference
	if rev := pinnedRevision(m.RevisionName, vm.Status.PreferenceRef, m.Name, v1.PreferenceKindOf(m.Kind)); rev != "" {
		return readRevision(g, vm.Namespace, rev, false)
	}
	return FindPreference(g, vm.Namespace, m)
}

func pinnedRevision(specRevision string, ref *v1.InstancetypeStatusRef, name, kind string) string {
	switch {
	case specRevision != "":
		return specRevision
	case ref != nil && ref.Name == name && ref.Kind == kind && ref.ControllerRevisionRef != nil:
		return ref.ControllerRevisionRef.Name
	}
	return ""
}

func readRevision(g Getter, namespace, name string, wantInstancetype bool) (*Object, error) {
	rev, err := g.Revision(namespace, name)
	if err != nil {
		return nil, err
	}
	o, err := Decode(rev)
	if err != nil {
		return nil, err
	}
	if (o.Instancetype != nil) != wantInstancetype {
		return nil, fmt.Errorf("ControllerRevision %s holds a %s", name, o.Kind)
	}
	return o, nil
}

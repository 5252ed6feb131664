package instancetype

import (
	"encoding/json"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// RevisionName is KubeVirt's name for the ControllerRevision of a VM's copy of an object:
// <vm>-<object>-<version>-<object uid>-<object generation>. It is the same for the same
// generation, so a retried capture finds the revision it made before.
func RevisionName(vmName, objName string, uid types.UID, generation int64) string {
	return fmt.Sprintf("%s-%s-%s-%s-%d", vmName, objName, itv1beta1.SchemeGroupVersion.Version, uid, generation)
}

// stored is what a revision's data holds: the whole object, as KubeVirt stores it, so the
// data says its own apiVersion and kind.
type stored struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              json.RawMessage `json:"spec"`
}

// NewRevision is the ControllerRevision holding a copy of found, controlled by the VM (so the
// garbage collector deletes it with the VM) and labelled as KubeVirt labels it.
func NewRevision(vm *v1.VirtualMachine, vmKind schema.GroupVersionKind, found *Object) (*appsv1.ControllerRevision, error) {
	var spec any = found.Instancetype
	if found.Preference != nil {
		spec = found.Preference
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	src := found.Object
	// Only what identifies the object is kept: labels, annotations, owners and managed
	// fields say nothing about what the VM runs with.
	data := stored{
		TypeMeta: metav1.TypeMeta{APIVersion: itv1beta1.SchemeGroupVersion.String(), Kind: found.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: src.GetName(), Namespace: src.GetNamespace(), UID: src.GetUID(),
			Generation: src.GetGeneration(), ResourceVersion: src.GetResourceVersion(),
			CreationTimestamp: src.GetCreationTimestamp(),
		},
		Spec: specJSON,
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	owner := metav1.NewControllerRef(vm, vmKind)
	return &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name:            RevisionName(vm.Name, src.GetName(), src.GetUID(), src.GetGeneration()),
			Namespace:       vm.Namespace,
			OwnerReferences: []metav1.OwnerReference{*owner},
			Labels: map[string]string{
				itv1beta1.ControllerRevisionObjectGenerationLabel: strconv.FormatInt(src.GetGeneration(), 10),
				itv1beta1.ControllerRevisionObjectKindLabel:       found.Kind,
				itv1beta1.ControllerRevisionObjectNameLabel:       src.GetName(),
				itv1beta1.ControllerRevisionObjectUIDLabel:        string(src.GetUID()),
				itv1beta1.ControllerRevisionObjectVersionLabel:    itv1beta1.SchemeGroupVersion.Version,
			},
		},
		Data: runtime.RawExtension{Raw: raw},
	}, nil
}

// Decode reads the copy a revision holds: an instance type's spec or a preference's,
// whichever its kind is.
func Decode(rev *appsv1.ControllerRevision) (*Object, error) {
	var s stored
	if err := json.Unmarshal(rev.Data.Raw, &s); err != nil {
		return nil, fmt.Errorf("ControllerRevision %s: %w", rev.Name, err)
	}
	if s.APIVersion != itv1beta1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("ControllerRevision %s holds %s %s, not %s", rev.Name, s.APIVersion, s.Kind, itv1beta1.SchemeGroupVersion)
	}
	out := &Object{Kind: s.Kind, Object: &s.ObjectMeta}
	var err error
	switch s.Kind {
	case v1.InstancetypeKind, v1.ClusterInstancetypeKind:
		out.Instancetype = &itv1beta1.VirtualMachineInstancetypeSpec{}
		err = json.Unmarshal(s.Spec, out.Instancetype)
	case v1.PreferenceKind, v1.ClusterPreferenceKind:
		out.Preference = &itv1beta1.VirtualMachinePreferenceSpec{}
		err = json.Unmarshal(s.Spec, out.Preference)
	default:
		return nil, fmt.Errorf("ControllerRevision %s holds an unexpected kind %q", rev.Name, s.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("ControllerRevision %s: %w", rev.Name, err)
	}
	return out, nil
}

// SameCopy reports whether two revisions hold the same kind and spec: a revision of the
// expected name that holds something else was not made by this controller for this VM.
func SameCopy(a, b *appsv1.ControllerRevision) bool {
	da, errA := Decode(a)
	db, errB := Decode(b)
	return errA == nil && errB == nil && da.Kind == db.Kind &&
		equality.Semantic.DeepEqual(da.Instancetype, db.Instancetype) &&
		equality.Semantic.DeepEqual(da.Preference, db.Preference)
}

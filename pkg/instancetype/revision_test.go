package instancetype

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func TestRevisionsHoldTheCopyTheyWereMadeFrom(t *testing.T) {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm", Namespace: "ns", UID: "vm-uid"}}
	vmKind := v1.SchemeGroupVersion.WithKind("VirtualMachine")
	it := &itv1beta1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "it-uid", Generation: 3, Labels: map[string]string{"dropped": "yes"}},
		Spec:       *small(),
	}
	pref := &itv1beta1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "ns", UID: "p-uid", Generation: 1},
		Spec:       itv1beta1.VirtualMachinePreferenceSpec{Devices: &itv1beta1.DevicePreferences{PreferredDiskBus: v1.DiskBusVirtio}},
	}
	for _, tt := range []struct {
		found    *Object
		name     string
		wantKind string
	}{
		{&Object{Kind: v1.ClusterInstancetypeKind, Object: it, Instancetype: &it.Spec}, "vm-u1.small-v1beta1-it-uid-3", v1.ClusterInstancetypeKind},
		{&Object{Kind: v1.PreferenceKind, Object: pref, Preference: &pref.Spec}, "vm-fedora-v1beta1-p-uid-1", v1.PreferenceKind},
	} {
		rev, err := NewRevision(vm, vmKind, tt.found)
		if err != nil {
			t.Fatal(err)
		}
		if rev.Name != tt.name || rev.Namespace != "ns" {
			t.Errorf("revision %s/%s, want ns/%s", rev.Namespace, rev.Name, tt.name)
		}
		if ref := metav1.GetControllerOf(rev); ref == nil || ref.UID != vm.UID || ref.Kind != "VirtualMachine" {
			t.Errorf("controller %+v, want the VM", ref)
		}
		if rev.Labels[itv1beta1.ControllerRevisionObjectKindLabel] != tt.wantKind || rev.Labels[itv1beta1.ControllerRevisionObjectVersionLabel] != "v1beta1" {
			t.Errorf("labels %v", rev.Labels)
		}
		got, err := Decode(rev)
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != tt.wantKind || !equality.Semantic.DeepEqual(got.Instancetype, tt.found.Instancetype) ||
			!equality.Semantic.DeepEqual(got.Preference, tt.found.Preference) || len(got.Object.GetLabels()) != 0 {
			t.Errorf("decoded %+v, want the copy of %+v", got, tt.found)
		}
		if !SameCopy(rev, rev.DeepCopy()) {
			t.Error("a revision is not the same copy as itself")
		}
	}
	// A later generation with other values is another copy.
	changed := it.DeepCopy()
	changed.Spec.Memory.Guest = resource.MustParse("4Gi")
	a, _ := NewRevision(vm, vmKind, &Object{Kind: v1.ClusterInstancetypeKind, Object: it, Instancetype: &it.Spec})
	b, _ := NewRevision(vm, vmKind, &Object{Kind: v1.ClusterInstancetypeKind, Object: changed, Instancetype: &changed.Spec})
	if SameCopy(a, b) {
		t.Error("revisions of different specs are the same copy")
	}
}

func TestDecodeRefusesWhatItCannotRead(t *testing.T) {
	for name, raw := range map[string]string{
		"not json":      "{",
		"other version": `{"apiVersion":"instancetype.kubevirt.io/v1alpha2","kind":"VirtualMachineInstancetype","spec":{}}`,
		"other kind":    `{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"Pod","spec":{}}`,
	} {
		rev, _ := NewRevision(&v1.VirtualMachine{}, v1.SchemeGroupVersion.WithKind("VirtualMachine"),
			&Object{Kind: v1.InstancetypeKind, Object: &metav1.ObjectMeta{}, Instancetype: small()})
		rev.Data.Raw = []byte(raw)
		if _, err := Decode(rev); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

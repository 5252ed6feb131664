package admission

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/instancetype"
)

// fakeTypes is an API server holding u1.small (1 vCPU, 2Gi), the preference "pref" and the
// revisions given.
type fakeTypes struct {
	revisions map[string]*appsv1.ControllerRevision
}

func (fakeTypes) Instancetype(_, name string) (*itv1beta1.VirtualMachineInstancetype, error) {
	return nil, apierrors.NewNotFound(itv1beta1.Resource(itv1beta1.InstancetypeResource), name)
}

func (fakeTypes) ClusterInstancetype(name string) (*itv1beta1.VirtualMachineClusterInstancetype, error) {
	if name != "u1.small" {
		return nil, apierrors.NewNotFound(itv1beta1.Resource(itv1beta1.ClusterInstancetypeResource), name)
	}
	return &itv1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}, Spec: itv1beta1.VirtualMachineInstancetypeSpec{
		CPU: itv1beta1.CPUInstancetype{Guest: 1}, Memory: itv1beta1.MemoryInstancetype{Guest: resource.MustParse("2Gi")}}}, nil
}

func (fakeTypes) Preference(_, name string) (*itv1beta1.VirtualMachinePreference, error) {
	return nil, apierrors.NewNotFound(itv1beta1.Resource(itv1beta1.PreferenceResource), name)
}

func (fakeTypes) ClusterPreference(name string) (*itv1beta1.VirtualMachineClusterPreference, error) {
	if name != "pref" {
		return nil, apierrors.NewNotFound(itv1beta1.Resource(itv1beta1.ClusterPreferenceResource), name)
	}
	return &itv1beta1.VirtualMachineClusterPreference{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: itv1beta1.VirtualMachinePreferenceSpec{
		Requirements: &itv1beta1.PreferenceRequirements{Memory: &itv1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse("1Gi")}}}}, nil
}

func (f fakeTypes) Revision(_, name string) (*appsv1.ControllerRevision, error) {
	if r, ok := f.revisions[name]; ok {
		return r, nil
	}
	return nil, apierrors.NewNotFound(appsv1.Resource("controllerrevisions"), name)
}

// typedVMJSON is vmJSON with the instance type u1.small instead of a memory request.
func typedVMJSON(t *testing.T) string {
	return string(edit(t, vmJSON, func(m map[string]any) {
		at(m, "spec").(map[string]any)["instancetype"] = map[string]any{"name": "u1.small"}
		delete(at(m, "spec", "template", "spec", "domain").(map[string]any), "resources")
	}))
}

func TestInstancetypesAtAdmission(t *testing.T) {
	// A revision pinning a 512Mi copy of a type that no longer exists.
	old := &itv1beta1.VirtualMachineClusterInstancetype{ObjectMeta: metav1.ObjectMeta{Name: "gone", UID: "gone-uid", Generation: 1},
		Spec: itv1beta1.VirtualMachineInstancetypeSpec{CPU: itv1beta1.CPUInstancetype{Guest: 1}, Memory: itv1beta1.MemoryInstancetype{Guest: resource.MustParse("512Mi")}}}
	rev, err := instancetype.NewRevision(&v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm1"}}, v1.SchemeGroupVersion.WithKind("VirtualMachine"),
		&instancetype.Object{Kind: v1.ClusterInstancetypeKind, Object: old, Instancetype: &old.Spec})
	if err != nil {
		t.Fatal(err)
	}
	limits := DefaultLimits()
	limits.Instancetypes = fakeTypes{revisions: map[string]*appsv1.ControllerRevision{rev.Name: rev}}
	spec := func(m map[string]any) map[string]any { return at(m, "spec").(map[string]any) }
	domain := func(m map[string]any) map[string]any {
		return at(m, "spec", "template", "spec", "domain").(map[string]any)
	}
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		limits *Limits
		want   []string // nil: allowed
	}{
		{name: "no memory in the template: the instance type's", mutate: func(map[string]any) {}},
		{name: "with a preference whose requirements it meets", mutate: func(m map[string]any) { spec(m)["preference"] = map[string]any{"name": "pref"} }},
		{name: "missing instance type", mutate: func(m map[string]any) { spec(m)["instancetype"] = map[string]any{"name": "u1.nope"} },
			want: []string{`spec.instancetype: Not found: "u1.nope"`, "Failure to find instancetype", `"u1.nope" not found`}},
		{name: "missing namespaced preference", mutate: func(m map[string]any) {
			spec(m)["preference"] = map[string]any{"name": "mine", "kind": "VirtualMachinePreference"}
		}, want: []string{"Failure to find preference", `"mine" not found`}},
		{name: "sockets set too", mutate: func(m map[string]any) { domain(m)["cpu"] = map[string]any{"sockets": 2} },
			want: []string{"VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type"}},
		{name: "memory request set too", mutate: func(m map[string]any) {
			domain(m)["resources"] = map[string]any{"requests": map[string]any{"memory": "1Gi"}}
		}, want: []string{"VM field(s) spec.template.spec.domain.resources.requests.memory conflicts with selected instance type"}},
		{name: "unknown kind", mutate: func(m map[string]any) { spec(m)["instancetype"] = map[string]any{"name": "u1.small", "kind": "Flavor"} },
			want: []string{`spec.instancetype.kind: Unsupported value: "Flavor"`}},
		{name: "inferred from a volume", mutate: func(m map[string]any) { spec(m)["instancetype"] = map[string]any{"inferFromVolume": "root"} },
			want: []string{"spec.instancetype.inferFromVolume", "not supported"}},
		{name: "pinned to a revision of a deleted type", mutate: func(m map[string]any) {
			spec(m)["instancetype"] = map[string]any{"name": "gone"}
			m["status"] = map[string]any{"instancetypeRef": map[string]any{"name": "gone", "kind": v1.ClusterInstancetypeKind, "controllerRevisionRef": map[string]any{"name": rev.Name}}}
		}},
		{name: "the expanded template is still checked", mutate: func(m map[string]any) { domain(m)["cpu"] = map[string]any{"model": "x\ny"} },
			want: []string{"spec.template.spec.domain.cpu.model"}},
		{name: "no access to instance types", limits: &Limits{}, mutate: func(map[string]any) {}, want: []string{"without access to instance types"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := limits
			if tt.limits != nil {
				l = *tt.limits
			}
			raw := edit(t, typedVMJSON(t), tt.mutate)
			resp := Validate(review(VirtualMachines, admissionv1.Create, raw), l)
			if tt.want == nil {
				if !resp.Allowed {
					t.Fatalf("denied: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed {
				t.Fatalf("allowed, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.Result.Message, w) {
					t.Errorf("message %q does not say %q", resp.Result.Message, w)
				}
			}
		})
	}
}

func TestDefaultingLeavesTypedTemplatesAlone(t *testing.T) {
	var vm v1.VirtualMachine
	raw := edit(t, typedVMJSON(t), func(m map[string]any) {
		at(m, "spec").(map[string]any)["preference"] = map[string]any{"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Ignore"}
		delete(at(m, "spec", "template", "spec", "domain", "devices", "disks", 0).(map[string]any), "disk")
	})
	if err := json.Unmarshal(raw, &vm); err != nil {
		t.Fatal(err)
	}
	ops := DefaultVM(&vm, true)
	var paths []string
	for _, op := range ops {
		paths = append(paths, op.Op+" "+op.Path)
	}
	if got := strings.Join(paths, ", "); got != "remove /spec/preference, add /spec/template/spec/domain" {
		t.Fatalf("patch %s, want the ignored preference removed and the domain patched", got)
	}
	d := ops[1].Value.(v1.DomainSpec)
	if d.Firmware == nil || d.Firmware.UUID == "" || d.Devices.Disks[0].Disk != nil || d.Machine != nil {
		t.Errorf("domain %+v: want a firmware UUID only, no disk bus or machine type", d)
	}
}

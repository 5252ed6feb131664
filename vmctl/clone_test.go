package vmctl

import (
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "vmctl-abc-12345", Namespace: "apps", UID: "pod-uid-1"},
		Spec:       corev1.PodSpec{NodeName: "node-a"},
	}
}

func testPrototype() *v1.VirtualMachine {
	return &v1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{
			Name: "testvm", Namespace: "apps", Generation: 4, UID: "proto-uid", ResourceVersion: "99",
			Labels:          map[string]string{"app": "web"},
			Annotations:     map[string]string{"note": "kept", lastApplied: "{}"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Something", Name: "x", UID: "x"}},
			Finalizers:      []string{"example.com/f"},
		},
		Spec: v1.VirtualMachineSpec{
			RunStrategy: ptr.To(v1.RunStrategyHalted),
			Template: &v1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
				Spec: v1.VirtualMachineInstanceSpec{
					Domain: v1.DomainSpec{
						Firmware: &v1.Firmware{UUID: "5d307ca9-b3ef-428c-8861-06e72d69f223"},
						Devices: v1.Devices{Interfaces: []v1.Interface{
							{Name: "default", MacAddress: "02:00:00:00:00:01"},
							{Name: "second", MacAddress: "02:00:00:00:00:02"},
						}},
					},
					NodeSelector: map[string]string{"disk": "ssd"},
				},
			},
		},
	}
}

func nodeTerm(reqs []corev1.NodeSelectorRequirement, fields ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: reqs, MatchFields: fields}
}

var onNodeA = corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a"}}

func TestClone(t *testing.T) {
	zone := []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"z1"}}}
	gpu := []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: corev1.NodeSelectorOpExists}}
	antiAffinity := &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}}
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: nodeTerm(gpu)}}

	tests := []struct {
		name         string
		mutate       func(*v1.VirtualMachine)
		wantRunning  *bool
		wantStrategy *v1.VirtualMachineRunStrategy
		wantAffinity *corev1.Affinity
	}{{
		name:         "runStrategy prototype runs Always, one new term",
		wantStrategy: ptr.To(v1.RunStrategyAlways),
		wantAffinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(nil, onNodeA)}}}},
	}, {
		name:        "running prototype gets running true, never a runStrategy",
		mutate:      func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy, vm.Spec.Running = nil, ptr.To(false) },
		wantRunning: ptr.To(true),
		wantAffinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(nil, onNodeA)}}}},
	}, {
		name:         "neither set: Always",
		mutate:       func(vm *v1.VirtualMachine) { vm.Spec.RunStrategy = nil },
		wantStrategy: ptr.To(v1.RunStrategyAlways),
		wantAffinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(nil, onNodeA)}}}},
	}, {
		name: "existing affinity is narrowed in every term, the rest kept",
		mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.Template.Spec.Affinity = &corev1.Affinity{
				NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution:  &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(zone), nodeTerm(gpu)}},
					PreferredDuringSchedulingIgnoredDuringExecution: preferred,
				},
				PodAntiAffinity: antiAffinity,
			}
		},
		wantStrategy: ptr.To(v1.RunStrategyAlways),
		wantAffinity: &corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(zone, onNodeA), nodeTerm(gpu, onNodeA)}},
				PreferredDuringSchedulingIgnoredDuringExecution: preferred,
			},
			PodAntiAffinity: antiAffinity,
		},
	}, {
		name: "pod affinity only: a node term is added",
		mutate: func(vm *v1.VirtualMachine) {
			vm.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: antiAffinity}
		},
		wantStrategy: ptr.To(v1.RunStrategyAlways),
		wantAffinity: &corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{nodeTerm(nil, onNodeA)}}},
			PodAntiAffinity: antiAffinity,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proto := testPrototype()
			if tt.mutate != nil {
				tt.mutate(proto)
			}
			before := proto.DeepCopy()
			clone, err := Clone(proto, testPod(), "apps", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(proto, before) {
				t.Errorf("Clone changed the prototype")
			}
			if clone.Name != "testvm-vmctl-abc-12345" || clone.Namespace != "apps" {
				t.Errorf("clone is %s/%s", clone.Namespace, clone.Name)
			}
			if !reflect.DeepEqual(clone.Spec.Running, tt.wantRunning) || !reflect.DeepEqual(clone.Spec.RunStrategy, tt.wantStrategy) {
				t.Errorf("running=%v runStrategy=%v, want %v %v", ptr.Deref(clone.Spec.Running, false), ptr.Deref(clone.Spec.RunStrategy, ""),
					ptr.Deref(tt.wantRunning, false), ptr.Deref(tt.wantStrategy, ""))
			}
			if got := clone.Spec.Template.Spec.Affinity; !reflect.DeepEqual(got, tt.wantAffinity) {
				t.Errorf("affinity = %+v\nwant %+v", got, tt.wantAffinity)
			}
			checkIdentity(t, clone)
		})
	}
}

// checkIdentity checks what every clone of testPrototype for testPod must carry.
func checkIdentity(t *testing.T, clone *v1.VirtualMachine) {
	t.Helper()
	wantLabels := map[string]string{"app": "web", PrototypeLabel: "testvm", PodLabel: "vmctl-abc-12345"}
	if !reflect.DeepEqual(clone.Labels, wantLabels) {
		t.Errorf("labels = %v, want %v", clone.Labels, wantLabels)
	}
	wantTemplateLabels := map[string]string{"app": "web", "tier": "front", PrototypeLabel: "testvm", PodLabel: "vmctl-abc-12345"}
	if !reflect.DeepEqual(clone.Spec.Template.ObjectMeta.Labels, wantTemplateLabels) {
		t.Errorf("template labels = %v, want %v", clone.Spec.Template.ObjectMeta.Labels, wantTemplateLabels)
	}
	wantAnnotations := map[string]string{"note": "kept", PodUIDAnnotation: "pod-uid-1", PrototypeGenerationAnnotation: "4"}
	if !reflect.DeepEqual(clone.Annotations, wantAnnotations) {
		t.Errorf("annotations = %v, want %v", clone.Annotations, wantAnnotations)
	}
	wantOwners := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "vmctl-abc-12345", UID: "pod-uid-1", Controller: ptr.To(true)}}
	if !reflect.DeepEqual(clone.OwnerReferences, wantOwners) {
		t.Errorf("ownerReferences = %+v, want %+v", clone.OwnerReferences, wantOwners)
	}
	if clone.UID != "" || clone.ResourceVersion != "" || clone.Generation != 0 || len(clone.Finalizers) != 0 {
		t.Errorf("object identity copied from the prototype: %+v", clone.ObjectMeta)
	}
	if uuid := clone.Spec.Template.Spec.Domain.Firmware.UUID; uuid != "" {
		t.Errorf("firmware UUID %q copied", uuid)
	}
	for _, iface := range clone.Spec.Template.Spec.Domain.Devices.Interfaces {
		if iface.MacAddress != "" {
			t.Errorf("interface %s keeps MAC %s", iface.Name, iface.MacAddress)
		}
	}
	if got := clone.Spec.Template.Spec.NodeSelector; !reflect.DeepEqual(got, map[string]string{"disk": "ssd"}) {
		t.Errorf("nodeSelector = %v, want the prototype's", got)
	}
}

func TestCloneEvictionStrategy(t *testing.T) {
	for _, tt := range []struct {
		proto *v1.EvictionStrategy
		want  v1.EvictionStrategy
	}{
		{nil, v1.EvictionStrategyExternal},
		{ptr.To(v1.EvictionStrategyNone), v1.EvictionStrategyNone},
	} {
		proto := testPrototype()
		proto.Spec.Template.Spec.EvictionStrategy = tt.proto
		clone, err := Clone(proto, testPod(), "apps", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ptr.Deref(clone.Spec.Template.Spec.EvictionStrategy, ""); got != tt.want {
			t.Errorf("prototype's evictionStrategy %v: clone's is %q, want %q", ptr.Deref(tt.proto, ""), got, tt.want)
		}
	}
}

func TestCloneElsewhereHasNoOwner(t *testing.T) {
	clone, err := Clone(testPrototype(), testPod(), "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	if clone.Namespace != "other" || len(clone.OwnerReferences) != 0 {
		t.Errorf("clone in %s with owners %v: the garbage collector ignores owners in other namespaces", clone.Namespace, clone.OwnerReferences)
	}
}

func TestCloneLongNamesAndLabels(t *testing.T) {
	proto := testPrototype()
	proto.Name = "a-prototype-with-a-rather-long-name-for-tests"
	pod := testPod()
	pod.Name = "vmctl-deployment-with-a-long-name-7c9f8d6b5-x2x4q"
	clone, err := Clone(proto, pod, "apps", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(clone.Name) != MaxNameLength {
		t.Errorf("name %q has %d characters", clone.Name, len(clone.Name))
	}
	if got := clone.Labels[PodLabel]; got != pod.Name {
		t.Errorf("pod label %q, want %q (fits a label value)", got, pod.Name)
	}
}

func TestCloneRejects(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*v1.VirtualMachine, *corev1.Pod)
		invalid bool
	}{
		{name: "no template", mutate: func(vm *v1.VirtualMachine, _ *corev1.Pod) { vm.Spec.Template = nil }, invalid: true},
		{name: "running and runStrategy", mutate: func(vm *v1.VirtualMachine, _ *corev1.Pod) { vm.Spec.Running = ptr.To(true) }, invalid: true},
		{name: "pod not scheduled", mutate: func(_ *v1.VirtualMachine, pod *corev1.Pod) { pod.Spec.NodeName = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proto, pod := testPrototype(), testPod()
			tt.mutate(proto, pod)
			_, err := Clone(proto, pod, "apps", nil)
			if err == nil || errors.Is(err, ErrInvalidPrototype) != tt.invalid {
				t.Errorf("error = %v, want invalid prototype: %v", err, tt.invalid)
			}
		})
	}
}

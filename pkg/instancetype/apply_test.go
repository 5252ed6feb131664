package instancetype

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	itv1beta1 "github.com/vmctl/vmctl/api/instancetype/v1beta1"
	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func small() *itv1beta1.VirtualMachineInstancetypeSpec {
	return &itv1beta1.VirtualMachineInstancetypeSpec{
		CPU:    itv1beta1.CPUInstancetype{Guest: 2},
		Memory: itv1beta1.MemoryInstancetype{Guest: resource.MustParse("2Gi")},
	}
}

func topology(t itv1beta1.PreferredCPUTopology) *itv1beta1.VirtualMachinePreferenceSpec {
	return &itv1beta1.VirtualMachinePreferenceSpec{CPU: &itv1beta1.CPUPreferences{PreferredCPUTopology: &t}}
}

func TestExpandGivesTheInstancetypesCPUAndMemory(t *testing.T) {
	tests := []struct {
		name                   string
		it                     func(*itv1beta1.VirtualMachineInstancetypeSpec)
		pref                   *itv1beta1.VirtualMachinePreferenceSpec
		sockets, cores, thread uint32
		request                string // the memory request, "" for none
	}{
		{"sockets by default", nil, nil, 2, 1, 1, ""},
		{"cores", nil, topology(itv1beta1.Cores), 1, 2, 1, ""},
		{"deprecated preferThreads", nil, topology(itv1beta1.DeprecatedPreferThreads), 1, 1, 2, ""},
		{"any is sockets", nil, topology(itv1beta1.Any), 2, 1, 1, ""},
		{"spread of 8 by 2", func(it *itv1beta1.VirtualMachineInstancetypeSpec) { it.CPU.Guest = 8 }, topology(itv1beta1.Spread), 4, 2, 1, ""},
		{"overcommit 25 %", func(it *itv1beta1.VirtualMachineInstancetypeSpec) { it.Memory.OvercommitPercent = 25 }, nil, 2, 1, 1, "1536Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := small()
			if tt.it != nil {
				tt.it(it)
			}
			out, errs := Expand(&v1.VirtualMachineInstanceTemplateSpec{}, it, tt.pref)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			cpu, mem := out.Spec.Domain.CPU, out.Spec.Domain.Memory
			if cpu.Sockets != tt.sockets || cpu.Cores != tt.cores || cpu.Threads != tt.thread {
				t.Errorf("topology %d/%d/%d, want %d/%d/%d", cpu.Sockets, cpu.Cores, cpu.Threads, tt.sockets, tt.cores, tt.thread)
			}
			if mem.Guest.Cmp(resource.MustParse("2Gi")) != 0 {
				t.Errorf("guest memory %s, want 2Gi", mem.Guest)
			}
			got, has := out.Spec.Domain.Resources.Requests[corev1.ResourceMemory]
			if (tt.request == "") == has || (has && got.Cmp(resource.MustParse(tt.request)) != 0) {
				t.Errorf("memory request %s (set %v), want %q", got.String(), has, tt.request)
			}
		})
	}
}

func TestExpandRefusesWhatTheTemplateSetsToo(t *testing.T) {
	tests := []struct {
		name  string
		tmpl  func(*v1.VirtualMachineInstanceTemplateSpec)
		it    func(*itv1beta1.VirtualMachineInstancetypeSpec)
		field string
	}{
		{"sockets", func(s *v1.VirtualMachineInstanceTemplateSpec) { s.Spec.Domain.CPU = &v1.CPU{Sockets: 2} }, nil, "spec.template.spec.domain.cpu.sockets"},
		{"cores", func(s *v1.VirtualMachineInstanceTemplateSpec) { s.Spec.Domain.CPU = &v1.CPU{Cores: 2} }, nil, "spec.template.spec.domain.cpu.cores"},
		{"threads", func(s *v1.VirtualMachineInstanceTemplateSpec) { s.Spec.Domain.CPU = &v1.CPU{Threads: 2} }, nil, "spec.template.spec.domain.cpu.threads"},
		{"guest memory", func(s *v1.VirtualMachineInstanceTemplateSpec) {
			s.Spec.Domain.Memory = &v1.Memory{Guest: ptr.To(resource.MustParse("1Gi"))}
		}, nil, "spec.template.spec.domain.memory.guest"},
		{"memory request", func(s *v1.VirtualMachineInstanceTemplateSpec) {
			s.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}, nil, "spec.template.spec.domain.resources.requests.memory"},
		{"cpu limit", func(s *v1.VirtualMachineInstanceTemplateSpec) {
			s.Spec.Domain.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		}, nil, "spec.template.spec.domain.resources.limits.cpu"},
		{"model set by both", func(s *v1.VirtualMachineInstanceTemplateSpec) { s.Spec.Domain.CPU = &v1.CPU{Model: "Nehalem"} },
			func(it *itv1beta1.VirtualMachineInstancetypeSpec) { it.CPU.Model = ptr.To("host-model") }, "spec.template.spec.domain.cpu.model"},
		{"node selector set by both", func(s *v1.VirtualMachineInstanceTemplateSpec) { s.Spec.NodeSelector = map[string]string{"a": "b"} },
			func(it *itv1beta1.VirtualMachineInstancetypeSpec) { it.NodeSelector = map[string]string{"c": "d"} }, "spec.template.spec.nodeSelector"},
		{"annotation with another value", func(s *v1.VirtualMachineInstanceTemplateSpec) {
			s.ObjectMeta.Annotations = map[string]string{"k": "mine"}
		},
			func(it *itv1beta1.VirtualMachineInstancetypeSpec) { it.Annotations = map[string]string{"k": "theirs"} }, "spec.template.metadata.annotations[k]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, it := &v1.VirtualMachineInstanceTemplateSpec{}, small()
			tt.tmpl(tmpl)
			if tt.it != nil {
				tt.it(it)
			}
			_, errs := Expand(tmpl, it, nil)
			if len(errs) != 1 || errs[0].Field != tt.field {
				t.Fatalf("errors %v, want one on %s", errs, tt.field)
			}
			if want := "VM field(s) " + tt.field + " conflicts with selected instance type"; !strings.Contains(errs[0].Error(), want) {
				t.Errorf("error %q does not say %q", errs[0], want)
			}
		})
	}
}

func TestExpandLeavesTheTemplateAlone(t *testing.T) {
	tmpl := &v1.VirtualMachineInstanceTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"k": "v"}}}
	it := small()
	it.Annotations = map[string]string{"from": "instancetype"}
	it.NodeSelector = map[string]string{"zone": "a"}
	out, errs := Expand(tmpl, it, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if tmpl.Spec.Domain.CPU != nil || len(tmpl.ObjectMeta.Annotations) != 1 || tmpl.Spec.NodeSelector != nil {
		t.Errorf("the template was changed: %+v", tmpl)
	}
	if out.ObjectMeta.Annotations["from"] != "instancetype" || out.ObjectMeta.Annotations["k"] != "v" || out.Spec.NodeSelector["zone"] != "a" {
		t.Errorf("expanded annotations %v node selector %v", out.ObjectMeta.Annotations, out.Spec.NodeSelector)
	}
}

func TestRequirementsAndSpread(t *testing.T) {
	req := func(cpu uint32, mem string) *itv1beta1.VirtualMachinePreferenceSpec {
		return &itv1beta1.VirtualMachinePreferenceSpec{Requirements: &itv1beta1.PreferenceRequirements{
			CPU: &itv1beta1.CPUPreferenceRequirement{Guest: cpu}, Memory: &itv1beta1.MemoryPreferenceRequirement{Guest: resource.MustParse(mem)}}}
	}
	withMemory := &v1.VirtualMachineInstanceTemplateSpec{Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{
		Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}}}}
	odd := small()
	odd.CPU.Guest = 3
	tests := []struct {
		name string
		tmpl *v1.VirtualMachineInstanceTemplateSpec
		it   *itv1beta1.VirtualMachineInstancetypeSpec
		pref *itv1beta1.VirtualMachinePreferenceSpec
		want string // "" for no error
	}{
		{"met", &v1.VirtualMachineInstanceTemplateSpec{}, small(), req(1, "1Gi"), ""},
		{"too few vCPUs", &v1.VirtualMachineInstanceTemplateSpec{}, small(), req(4, "1Gi"), "insufficient CPU resources of 2 vCPU provided by instance type, preference requires 4 vCPU"},
		{"too little memory", &v1.VirtualMachineInstanceTemplateSpec{}, small(), req(1, "4Gi"), "insufficient Memory resources of 2Gi provided by instance type, preference requires 4Gi"},
		{"template too small", withMemory, nil, req(1, "256Mi"), "insufficient Memory resources of 128Mi provided by VirtualMachine, preference requires 256Mi"},
		{"odd vCPUs spread", &v1.VirtualMachineInstanceTemplateSpec{}, odd, topology(itv1beta1.Spread), "not divisible by the spread ratio 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := Expand(tt.tmpl, tt.it, tt.pref)
			if got := errs.ToAggregate(); (tt.want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), tt.want)) {
				t.Errorf("errors %v, want %q", got, tt.want)
			}
		})
	}
}

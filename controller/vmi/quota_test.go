package vmi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func quotaOf(namespace string, hard ...corev1.ResourceName) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q-" + string(hard[0]), Namespace: namespace},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for _, r := range hard {
		q.Spec.Hard[r] = resource.MustParse("10")
	}
	return q
}

// TestQuotasAutoLimits: only quotas on limits.* ask for limits, each resource on its own, and
// the namespace's label tunes the memory ratio within sense.
func TestQuotasAutoLimits(t *testing.T) {
	tests := []struct {
		name   string
		quotas []*corev1.ResourceQuota
		label  string
		want   AutoLimits
	}{
		{"no quota", nil, "", AutoLimits{}},
		{"requests only", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceCPU)}, "", AutoLimits{}},
		{"limits.cpu", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceLimitsCPU)}, "3", AutoLimits{CPU: true}},
		{"limits.memory", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceLimitsMemory)}, "", AutoLimits{Memory: true, MemoryRatio: 2}},
		{"both, in two quotas", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceLimitsCPU), quotaOf("ns", corev1.ResourceLimitsMemory)}, "", AutoLimits{CPU: true, Memory: true, MemoryRatio: 2}},
		{"another namespace's quota", []*corev1.ResourceQuota{quotaOf("other", corev1.ResourceLimitsCPU)}, "", AutoLimits{}},
		{"the namespace's ratio", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceLimitsMemory)}, "1.5", AutoLimits{Memory: true, MemoryRatio: 1.5}},
		{"a ratio below 1", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceLimitsMemory)}, "0.5", AutoLimits{Memory: true, MemoryRatio: 2}},
		{"not a number", []*corev1.ResourceQuota{quotaOf("ns", corev1.ResourceLimitsMemory)}, "NaN", AutoLimits{Memory: true, MemoryRatio: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			quotas := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			for _, q := range tt.quotas {
				_ = quotas.Add(q)
			}
			namespaces := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			_ = namespaces.Add(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{MemoryLimitsRatioLabel: tt.label}}})
			q := Quotas{Quotas: corelisters.NewResourceQuotaLister(quotas), Namespaces: corelisters.NewNamespaceLister(namespaces)}
			if got := q.AutoLimits("ns"); got != tt.want {
				t.Errorf("AutoLimits = %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := (Quotas{}).AutoLimits("ns"); got != (AutoLimits{}) {
		t.Errorf("no listers: %+v, want nothing asked", got)
	}
}

// TestLauncherAutoLimits: compute gets the limits its namespace's quotas ask for and the
// instance does not set: a CPU per vCPU, the ratio times its memory request.
func TestLauncherAutoLimits(t *testing.T) {
	q := resource.MustParse
	memory := v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("128Mi")}} // 272Mi with the overheads
	tests := []struct {
		name       string
		resources  v1.ResourceRequirements
		cpu        *v1.CPU
		auto       AutoLimits
		wantCPU    string // "" means no limit
		wantMemory string
	}{
		{"nothing asked", memory, nil, AutoLimits{}, "", ""},
		{"both", memory, &v1.CPU{Cores: 2, Sockets: 2}, AutoLimits{CPU: true, Memory: true, MemoryRatio: 2}, "4", "544Mi"},
		{"memory alone, the namespace's ratio", memory, nil, AutoLimits{Memory: true, MemoryRatio: 1.5}, "", "408Mi"},
		{"the instance's own limits stay", v1.ResourceRequirements{Requests: memory.Requests,
			Limits: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("300Mi")}},
			nil, AutoLimits{CPU: true, Memory: true, MemoryRatio: 2}, "500m", "300Mi"},
		{"never below the CPU request", v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("128Mi"), corev1.ResourceCPU: q("3")}},
			nil, AutoLimits{CPU: true}, "3", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Domain: v1.DomainSpec{Resources: tt.resources, CPU: tt.cpu}}}
			r := launcherResources(vmi, PodConfig{AutoLimits: tt.auto})
			for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: tt.wantCPU, corev1.ResourceMemory: tt.wantMemory} {
				got, ok := r.Limits[name]
				if want == "" && ok || want != "" && got.Cmp(q(want)) != 0 {
					t.Errorf("%s limit %v, want %q", name, r.Limits, want)
				}
			}
		})
	}
}

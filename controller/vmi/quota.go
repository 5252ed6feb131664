package vmi

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// MemoryLimitsRatioLabel on a namespace sets how many times its memory request a launcher's
// automatic memory limit is (KubeVirt's label; DefaultMemoryLimitsRatio without it).
const MemoryLimitsRatioLabel = "alpha.kubevirt.io/auto-memory-limits-ratio"

// DefaultMemoryLimitsRatio is KubeVirt's: twice the memory request.
const DefaultMemoryLimitsRatio = 2.0

// AutoLimits is what a namespace's ResourceQuotas ask of the limits of a launcher's compute
// container whose instance sets none (KubeVirt's AutoResourceLimits): a quota on limits.cpu
// or limits.memory refuses a pod any of whose containers lacks that limit.
type AutoLimits struct {
	// CPU limits compute to one CPU per vCPU.
	CPU bool
	// Memory limits compute to MemoryRatio times its memory request.
	Memory      bool
	MemoryRatio float64
}

// Quotas reads the ResourceQuotas and namespace labels that decide a pod's AutoLimits.
type Quotas struct {
	Quotas     corelisters.ResourceQuotaLister
	Namespaces corelisters.NamespaceLister
	Synced     []cache.InformerSynced
}

// NewQuotas reads them through these informers.
func NewQuotas(quotas coreinformers.ResourceQuotaInformer, namespaces coreinformers.NamespaceInformer) Quotas {
	return Quotas{Quotas: quotas.Lister(), Namespaces: namespaces.Lister(),
		Synced: []cache.InformerSynced{quotas.Informer().HasSynced, namespaces.Informer().HasSynced}}
}

// AutoLimits is what the quotas of namespace ask. A zero Quotas (no listers) asks nothing.
func (q Quotas) AutoLimits(namespace string) AutoLimits {
	var out AutoLimits
	if q.Quotas == nil || q.Namespaces == nil {
		return out
	}
	quotas, _ := q.Quotas.ResourceQuotas(namespace).List(labels.Everything())
	for _, quota := range quotas {
		_, cpu := quota.Spec.Hard[corev1.ResourceLimitsCPU]
		_, memory := quota.Spec.Hard[corev1.ResourceLimitsMemory]
		out.CPU, out.Memory = out.CPU || cpu, out.Memory || memory
	}
	if !out.Memory {
		return out
	}
	out.MemoryRatio = DefaultMemoryLimitsRatio
	if ns, err := q.Namespaces.Get(namespace); err == nil {
		out.MemoryRatio = memoryLimitsRatio(ns.Labels[MemoryLimitsRatioLabel])
	}
	return out
}

// memoryLimitsRatio parses the namespace's ratio label; a missing, malformed or sub-1 value
// (a limit below the request would be refused) is the default.
func memoryLimitsRatio(label string) float64 {
	ratio, err := strconv.ParseFloat(label, 64)
	if err != nil || !(ratio >= 1 && ratio <= 1000) { // NaN fails both
		return DefaultMemoryLimitsRatio
	}
	return ratio
}

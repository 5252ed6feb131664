package migration

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/api/migrations/v1alpha1"
)

// matchPolicy is the policy that tunes an instance's migrations, as KubeVirt picks it: of
// those whose selectors all match the instance's labels and its namespace's, the one naming
// the most labels; on a tie, the first by name. nil: none matches.
func matchPolicy(policies []*v1alpha1.MigrationPolicy, vmiLabels, namespaceLabels map[string]string) *v1alpha1.MigrationPolicy {
	var best *v1alpha1.MigrationPolicy
	bestCount := -1
	for _, p := range slices.SortedFunc(slices.Values(policies), func(a, b *v1alpha1.MigrationPolicy) int { return cmp.Compare(a.Name, b.Name) }) {
		var vmiSelector, namespaceSelector v1alpha1.LabelSelector
		if s := p.Spec.Selectors; s != nil {
			vmiSelector, namespaceSelector = s.VirtualMachineInstanceSelector, s.NamespaceSelector
		}
		if !subset(vmiSelector, vmiLabels) || !subset(namespaceSelector, namespaceLabels) {
			continue
		}
		if n := len(vmiSelector) + len(namespaceSelector); n > bestCount {
			best, bestCount = p, n
		}
	}
	return best
}

// subset says whether every label of selector has its value in labels.
func subset(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// configure is the configuration a migration runs with: the defaults, with what the policy
// (if any) sets in their place.
func configure(defaults v1.MigrationConfiguration, policy *v1alpha1.MigrationPolicy) *v1.MigrationConfiguration {
	out := defaults.DeepCopy()
	if policy == nil {
		return out
	}
	s := policy.Spec
	if s.AllowAutoConverge != nil {
		out.AllowAutoConverge = ptr.To(*s.AllowAutoConverge)
	}
	if s.BandwidthPerMigration != nil {
		out.BandwidthPerMigration = ptr.To(s.BandwidthPerMigration.DeepCopy())
	}
	if s.CompletionTimeoutPerGiB != nil {
		out.CompletionTimeoutPerGiB = ptr.To(*s.CompletionTimeoutPerGiB)
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }

// DefaultConfiguration is KubeVirt's cluster-wide default, except that auto-converge is on:
// without it a guest that keeps dirtying memory under TCG never converges.
func DefaultConfiguration() v1.MigrationConfiguration {
	return v1.MigrationConfiguration{
		BandwidthPerMigration:   ptr.To(resource.MustParse("0Mi")),
		CompletionTimeoutPerGiB: ptr.To(int64(150)),
		AllowAutoConverge:       ptr.To(true),
	}
}

package migration

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/api/migrations/v1alpha1"
)

func TestMatchPolicy(t *testing.T) {
	policy := func(name string, vmi, ns v1alpha1.LabelSelector) *v1alpha1.MigrationPolicy {
		return &v1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.MigrationPolicySpec{Selectors: &v1alpha1.Selectors{VirtualMachineInstanceSelector: vmi, NamespaceSelector: ns}}}
	}
	everyone := policy("everyone", nil, nil)
	web := policy("web", v1alpha1.LabelSelector{"app": "web"}, nil)
	webInProd := policy("web-in-prod", v1alpha1.LabelSelector{"app": "web"}, v1alpha1.LabelSelector{"env": "prod"})
	otherWeb := policy("a-web", v1alpha1.LabelSelector{"app": "web"}, nil)
	db := policy("db", v1alpha1.LabelSelector{"app": "db"}, nil)

	tests := []struct {
		name     string
		policies []*v1alpha1.MigrationPolicy
		vmi, ns  map[string]string
		want     string
	}{
		{"no policies", nil, map[string]string{"app": "web"}, nil, ""},
		{"none matches", []*v1alpha1.MigrationPolicy{db}, map[string]string{"app": "web"}, nil, ""},
		{"empty selectors match every instance", []*v1alpha1.MigrationPolicy{everyone, db}, map[string]string{"app": "web"}, nil, "everyone"},
		{"the one naming more labels wins", []*v1alpha1.MigrationPolicy{everyone, web, webInProd}, map[string]string{"app": "web"}, map[string]string{"env": "prod"}, "web-in-prod"},
		{"a namespace label that differs rules one out", []*v1alpha1.MigrationPolicy{web, webInProd}, map[string]string{"app": "web"}, map[string]string{"env": "dev"}, "web"},
		{"a tie goes to the first by name", []*v1alpha1.MigrationPolicy{web, otherWeb}, map[string]string{"app": "web"}, nil, "a-web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if p := matchPolicy(tt.policies, tt.vmi, tt.ns); p != nil {
				got = p.Name
			}
			if got != tt.want {
				t.Errorf("matchPolicy = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestConfigure(t *testing.T) {
	defaults := DefaultConfiguration()
	if got := configure(defaults, nil); *got.CompletionTimeoutPerGiB != 150 || !*got.AllowAutoConverge || !got.BandwidthPerMigration.IsZero() {
		t.Errorf("no policy: %+v, want the defaults", got)
	}
	slow := &v1alpha1.MigrationPolicy{Spec: v1alpha1.MigrationPolicySpec{
		BandwidthPerMigration: ptr.To(resource.MustParse("2Mi")), AllowAutoConverge: ptr.To(false)}}
	got := configure(defaults, slow)
	if got.BandwidthPerMigration.String() != "2Mi" || *got.AllowAutoConverge || *got.CompletionTimeoutPerGiB != 150 {
		t.Errorf("policy: bandwidth %s, auto-converge %v, timeout %d; want 2Mi, false, 150 (the default)",
			got.BandwidthPerMigration, *got.AllowAutoConverge, *got.CompletionTimeoutPerGiB)
	}
	if !*defaults.AllowAutoConverge {
		t.Error("configure changed the defaults")
	}
}

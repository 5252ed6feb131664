package admission

import (
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestFilesystems(t *testing.T) {
	virtiofs := func(name string) map[string]any { return map[string]any{"name": name, "virtiofs": map[string]any{}} }
	claim := map[string]any{"name": "shared", "persistentVolumeClaim": map[string]any{"claimName": "data"}}
	config := map[string]any{"name": "shared", "configMap": map[string]any{"name": "app"}}
	for _, tc := range []struct {
		name        string
		volumes     []any
		disks       []any
		filesystems []any
		field, why  string
	}{
		{name: "a claim", volumes: []any{claim}, filesystems: []any{virtiofs("shared")}},
		{name: "a configMap", volumes: []any{config}, filesystems: []any{virtiofs("shared")}},
		{name: "a serviceAccount", volumes: []any{map[string]any{"name": "shared", "serviceAccount": map[string]any{"serviceAccountName": "default"}}},
			filesystems: []any{virtiofs("shared")}},
		{name: "no volume of its name", volumes: []any{claim}, filesystems: []any{virtiofs("other")},
			field: "spec.domain.devices.filesystems[0].name", why: "no volume of this name"},
		{name: "an emptyDisk", volumes: []any{map[string]any{"name": "shared", "emptyDisk": map[string]any{"capacity": "1Gi"}}},
			filesystems: []any{virtiofs("shared")}, field: "spec.volumes[1]", why: "not a emptyDisk"},
		{name: "no virtiofs", volumes: []any{claim}, filesystems: []any{map[string]any{"name": "shared"}},
			field: "spec.domain.devices.filesystems[0].virtiofs", why: "the only filesystem type"},
		{name: "twice", volumes: []any{claim}, filesystems: []any{virtiofs("shared"), virtiofs("shared")},
			field: "spec.domain.devices.filesystems[1].name", why: "Duplicate"},
		{name: "a disk too", volumes: []any{claim}, disks: []any{map[string]any{"name": "shared", "disk": map[string]any{}}},
			filesystems: []any{virtiofs("shared")}, field: "spec.domain.devices.disks[1].name", why: "shared as a filesystem"},
		{name: "a name too long for its container", volumes: []any{map[string]any{"name": strings.Repeat("a", 55), "configMap": map[string]any{"name": "app"}}},
			filesystems: []any{virtiofs(strings.Repeat("a", 55))}, field: "spec.domain.devices.filesystems[0].name", why: "virtiofs-aaa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			add := func(m map[string]any) {
				s := at(m, "spec").(map[string]any)
				s["volumes"] = append(s["volumes"].([]any), tc.volumes...)
				devices := at(m, "spec", "domain", "devices").(map[string]any)
				devices["disks"] = append(devices["disks"].([]any), tc.disks...)
				devices["filesystems"] = tc.filesystems
			}
			checkResponse(t, Validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, add)), DefaultLimits()), tc.field, tc.why)
		})
	}
}

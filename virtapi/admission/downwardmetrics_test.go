package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestDownwardMetrics(t *testing.T) {
	gated := DefaultLimits()
	gated.DownwardMetrics = true
	volume := map[string]any{"name": "metrics", "downwardMetrics": map[string]any{}}
	disk := func(d map[string]any) map[string]any { return map[string]any{"name": "metrics", "disk": d} }
	for _, tc := range []struct {
		name       string
		volumes    []any
		disks      []any
		device     bool
		limits     Limits
		field, why string
	}{
		{name: "the volume without the gate, as KubeVirt by default", volumes: []any{volume}, limits: DefaultLimits(),
			field: "spec.volumes[1].downwardMetrics", why: "DownwardMetrics feature gate"},
		{name: "the device without the gate", device: true, limits: DefaultLimits(),
			field: "spec.domain.devices.downwardMetrics", why: "DownwardMetrics feature gate"},
		{name: "the device", device: true, limits: gated},
		{name: "the volume on a virtio disk", volumes: []any{volume}, disks: []any{disk(map[string]any{"bus": "virtio"})}, limits: gated},
		{name: "the volume with no disk named", volumes: []any{volume}, limits: gated},
		{name: "two volumes", volumes: []any{volume, map[string]any{"name": "again", "downwardMetrics": map[string]any{}}}, limits: gated,
			field: "spec.volumes[2].downwardMetrics", why: "only one downwardMetrics volume"},
		{name: "on SATA", volumes: []any{volume}, disks: []any{disk(map[string]any{"bus": "sata"})}, limits: gated,
			field: "spec.domain.devices.disks[1].disk.bus", why: "read-only"},
		{name: "as a cdrom", volumes: []any{volume}, disks: []any{map[string]any{"name": "metrics", "cdrom": map[string]any{}}}, limits: gated,
			field: "spec.domain.devices.disks[1].cdrom", why: "use disk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			add := func(m map[string]any) {
				s := at(m, "spec").(map[string]any)
				s["volumes"] = append(s["volumes"].([]any), tc.volumes...)
				devices := at(m, "spec", "domain", "devices").(map[string]any)
				devices["disks"] = append(devices["disks"].([]any), tc.disks...)
				if tc.device {
					devices["downwardMetrics"] = map[string]any{}
				}
			}
			checkResponse(t, Validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, add)), tc.limits), tc.field, tc.why)
		})
	}
}

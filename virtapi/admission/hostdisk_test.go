package admission

import (
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
)

func TestHostDisks(t *testing.T) {
	gated := DefaultLimits()
	gated.HostDisk = true
	hostDisk := func(hd map[string]any) func(m map[string]any) {
		return func(m map[string]any) {
			s := at(m, "spec").(map[string]any)
			s["volumes"] = append(s["volumes"].([]any), map[string]any{"name": "host", "hostDisk": hd})
		}
	}
	for _, tc := range []struct {
		name       string
		hostDisk   map[string]any
		limits     Limits
		field, why string
	}{
		{name: "without the gate, as KubeVirt by default", hostDisk: map[string]any{"path": "/data/disk.img", "type": "DiskOrCreate", "capacity": "1Gi"},
			limits: DefaultLimits(), field: "spec.volumes[1].hostDisk", why: "HostDisk feature gate"},
		{name: "DiskOrCreate", hostDisk: map[string]any{"path": "/data/disk.img", "type": "DiskOrCreate", "capacity": "1Gi"}, limits: gated},
		{name: "Disk", hostDisk: map[string]any{"path": "/data/disk.img", "type": "Disk"}, limits: gated},
		{name: "a shared Disk", hostDisk: map[string]any{"path": "/nfs/vm/disk.img", "type": "Disk", "shared": true}, limits: gated},
		{name: "no path", hostDisk: map[string]any{"type": "Disk"}, limits: gated, field: "spec.volumes[1].hostDisk.path", why: "Required value"},
		{name: "a relative path", hostDisk: map[string]any{"path": "data/disk.img", "type": "Disk"}, limits: gated,
			field: "spec.volumes[1].hostDisk.path", why: "absolute, clean path to a file"},
		{name: "dot-dot", hostDisk: map[string]any{"path": "/data/../etc/disk.img", "type": "Disk"}, limits: gated,
			field: "spec.volumes[1].hostDisk.path", why: "absolute, clean path to a file"},
		{name: "a directory", hostDisk: map[string]any{"path": "/data/", "type": "Disk"}, limits: gated,
			field: "spec.volumes[1].hostDisk.path", why: "absolute, clean path to a file"},
		{name: "the root", hostDisk: map[string]any{"path": "/", "type": "Disk"}, limits: gated,
			field: "spec.volumes[1].hostDisk.path", why: "absolute, clean path to a file"},
		{name: "an unknown type", hostDisk: map[string]any{"path": "/data/disk.img", "type": "Directory"}, limits: gated,
			field: "spec.volumes[1].hostDisk.type", why: `supported values: "Disk", "DiskOrCreate"`},
		{name: "DiskOrCreate without capacity", hostDisk: map[string]any{"path": "/data/disk.img", "type": "DiskOrCreate"}, limits: gated,
			field: "spec.volumes[1].hostDisk.capacity", why: "the size of the image to create"},
		{name: "Disk with a capacity", hostDisk: map[string]any{"path": "/data/disk.img", "type": "Disk", "capacity": "1Gi"}, limits: gated,
			field: "spec.volumes[1].hostDisk.capacity", why: "must not be set when type is Disk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkResponse(t, Validate(review(VirtualMachineInstances, admissionv1.Create, edit(t, vmiJSON, hostDisk(tc.hostDisk))), tc.limits), tc.field, tc.why)
		})
	}
}

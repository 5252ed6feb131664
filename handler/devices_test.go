package handler

import (
	"testing"

	"github.com/vmctl/vmctl/handler/deviceplugin"
	"github.com/vmctl/vmctl/launcher/layout"
)

// /dev/kvm is offered only where the probe found KVM usable, so a pod that asks for it never
// lands on a node such as this project's (kvm_pvm), where guests would crash.
func TestNodeDevicesFollowTheKVMProbe(t *testing.T) {
	all := func(string) bool { return true }
	tests := []struct {
		name      string
		kvmUsable bool
		exists    func(string) bool
		want      []string
	}{
		{"KVM host", true, all, []string{layout.KVMResource, layout.TunResource}},
		{"KVM refused by the probe", false, all, []string{layout.TunResource}},
		{"no device nodes", true, func(string) bool { return false }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, d := range NodeDevices(tt.kvmUsable, tt.exists) {
				got = append(got, d.Resource)
				if d.Count < 110 {
					t.Errorf("%s: %d pods may hold it, fewer than a node runs", d.Resource, d.Count)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("resources %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("resources %v, want %v", got, tt.want)
				}
			}
		})
	}
	if kvm := NodeDevices(true, all)[0]; kvm != (deviceplugin.Device{Resource: layout.KVMResource, HostPath: "/dev/kvm", Count: devicesPerNode}) {
		t.Errorf("KVM device %+v", kvm)
	}
}

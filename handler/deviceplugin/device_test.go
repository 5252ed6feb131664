package deviceplugin

import (
	"strings"
	"testing"
)

func TestSocketName(t *testing.T) {
	tests := []struct {
		resource, socket, id0 string
	}{
		{"devices.kubevirt.io/kvm", "vmctl-kvm.sock", "kvm-0"},
		{"devices.kubevirt.io/tun", "vmctl-tun.sock", "tun-0"},
		{"devices.kubevirt.io/vhost-net", "vmctl-vhost-net.sock", "vhost-net-0"},
		{"example.com/My_Dev.v2", "vmctl-my_dev.v2.sock", "my_dev.v2-0"},
		{"example.com/a b/../c", "vmctl-c.sock", "c-0"},
		{"example.com/x:y", "vmctl-x-y.sock", "x-y-0"},
	}
	for _, tt := range tests {
		if got := socketName(tt.resource); got != tt.socket {
			t.Errorf("socketName(%q) = %q, want %q", tt.resource, got, tt.socket)
		}
		if got := deviceID(shortName(tt.resource), 0); got != tt.id0 {
			t.Errorf("deviceID(%q, 0) = %q, want %q", tt.resource, got, tt.id0)
		}
	}
}

func TestValidate(t *testing.T) {
	kvm := Device{Resource: "devices.kubevirt.io/kvm", HostPath: "/dev/kvm", Count: 1000}
	tests := []struct {
		name    string
		dir     string
		devices []Device
		wantErr string // empty: valid
	}{
		{"ok", "/var/lib/kubelet/device-plugins", []Device{kvm, {Resource: "devices.kubevirt.io/tun", HostPath: "/dev/net/tun", Count: 110}}, ""},
		{"no domain", "/d", []Device{{Resource: "kvm", HostPath: "/dev/kvm", Count: 1}}, "not domain-prefixed"},
		{"bad name", "/d", []Device{{Resource: "example.com/-kvm", HostPath: "/dev/kvm", Count: 1}}, "example.com/-kvm"},
		{"no host path", "/d", []Device{{Resource: "example.com/kvm", Count: 1}}, "no host path"},
		{"zero count", "/d", []Device{{Resource: "example.com/kvm", HostPath: "/dev/kvm"}}, "not positive"},
		{"same socket", "/d", []Device{kvm, {Resource: "example.com/KVM", HostPath: "/dev/kvm", Count: 1}}, "share socket"},
		{"long dir", "/" + strings.Repeat("d", 100), []Device{kvm}, "longer than"},
		{"long id", "/d", []Device{{Resource: "example.com/" + strings.Repeat("k", 60), HostPath: "/dev/kvm", Count: 1000}}, "63 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(tt.dir, tt.devices)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("validate = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

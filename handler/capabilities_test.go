package handler

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"libvirt.org/go/libvirtxml"

	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestLoadCapabilities(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"abc.xml": "<qemuCaps/>", ".abc.xml": "partial", "notes.txt": "x"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		dir  string
		want Capabilities
	}{
		{"the probe's XML files only", dir, Capabilities{"abc.xml": []byte("<qemuCaps/>")}},
		{"no directory: no cache", filepath.Join(dir, "missing"), nil},
		{"not configured", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadCapabilities(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) || string(got["abc.xml"]) != string(tt.want["abc.xml"]) {
				t.Errorf("LoadCapabilities = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSeedCapabilities(t *testing.T) {
	caps := Capabilities{"abc.xml": []byte("<qemuCaps/>")}
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		want    string
		seeded  bool
	}{
		{"a new pod gets the node's cache", func(*testing.T, string) {}, "<qemuCaps/>", true},
		{"the pod's own probe is kept", func(t *testing.T, dir string) {
			mustWrite(t, filepath.Join(dir, layout.CapabilitiesRel, "abc.xml"), "probed by the pod")
		}, "probed by the pod", false},
		{"a link out of the pod is not followed", func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(dir, "libvirt-home")); err != nil {
				t.Fatal(err)
			}
		}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.prepare(t, dir)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			seedCapabilities(root, caps)

			file := filepath.Join(dir, layout.CapabilitiesRel, "abc.xml")
			got, _ := os.ReadFile(file)
			if string(got) != tt.want {
				t.Fatalf("cache file = %q, want %q", got, tt.want)
			}
			if !tt.seeded {
				return
			}
			// The pod's libvirtd replaces the file when it probes anew, in directories it owns.
			for p := file; p != dir; p = filepath.Dir(p) {
				fi, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if st := fi.Sys().(*syscall.Stat_t); st.Uid != layout.LauncherUID || st.Gid != layout.LauncherGID {
					t.Errorf("%s owned by %d:%d, want the launcher's user", p, st.Uid, st.Gid)
				}
			}
		})
	}
}

func TestCapabilitiesForDomain(t *testing.T) {
	probed := "<qemuCaps>\n  <flag name='x86-max-cpu'/>\n  <flag name='cpu-unavailable-features'/>\n</qemuCaps>"
	without := "<qemuCaps>\n  <flag name='x86-max-cpu'/>\n  \n</qemuCaps>"
	custom := func(model string, features ...string) *libvirtxml.DomainCPU {
		cpu := &libvirtxml.DomainCPU{Mode: "custom", Match: "exact", Model: &libvirtxml.DomainCPUModel{Value: model}}
		for _, f := range features {
			cpu.Features = append(cpu.Features, libvirtxml.DomainCPUFeature{Name: f, Policy: "require"})
		}
		return cpu
	}
	tests := []struct {
		name string
		dom  libvirtxml.Domain
		want string
	}{
		{"TCG's model, no feature named: read back by CPUID words", libvirtxml.Domain{Type: domain.TypeQEMU, CPU: custom(domain.TCGCPUModel)}, without},
		{"a feature named: it may be an MSR one", libvirtxml.Domain{Type: domain.TypeQEMU, CPU: custom(domain.TCGCPUModel, "vmx-exit-nosave-debugctl")}, probed},
		{"another model", libvirtxml.Domain{Type: domain.TypeQEMU, CPU: custom("Skylake-Client")}, probed},
		{"KVM's host-model", libvirtxml.Domain{Type: domain.TypeKVM, CPU: &libvirtxml.DomainCPU{Mode: "host-model"}}, probed},
		{"no CPU element", libvirtxml.Domain{Type: domain.TypeQEMU}, probed},
	}
	caps := Capabilities{"abc.xml": []byte(probed)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(caps.ForDomain(&tt.dom)["abc.xml"]); got != tt.want {
				t.Errorf("ForDomain = %q, want %q", got, tt.want)
			}
			if string(caps["abc.xml"]) != probed {
				t.Errorf("ForDomain changed the node's cache: %q", caps["abc.xml"])
			}
		})
	}
}

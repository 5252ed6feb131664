package handler

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

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

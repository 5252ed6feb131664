package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInRootResolvesLinksInTheProcessRoot(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"run/kubevirt-private/kernel-boot", "var", "opt"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"var/run": "/run", "opt/boot": "../run/kubevirt-private/kernel-boot", "opt/out": "../../.."}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ path, want string }{
		{"/var/run/kubevirt-private/kernel-boot/kernel", "run/kubevirt-private/kernel-boot/kernel"},
		{"/opt/boot/kernel", "run/kubevirt-private/kernel-boot/kernel"},
		{"/run/missing", "run/missing"},
		{"/opt/out/etc", ""},
	}
	for _, tt := range tests {
		if got := inRoot(root, tt.path); got != filepath.Join(root, tt.want) {
			t.Errorf("inRoot(%q) = %q, want %q", tt.path, got, filepath.Join(root, tt.want))
		}
	}
}

package launcher

import (
	"os"
	"path/filepath"
	"testing"
)

// A session libvirtd reads the QEMU driver's settings from its XDG_CONFIG_HOME, and needs its
// per-user directories to exist in the pod's private directory.
func TestPrepareSessionDirs(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "qemu.conf")
	if err := os.WriteFile(conf, []byte(`security_driver = "none"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"), "LIBVIRT_DEFAULT_URI=qemu:///session"}
	if err := prepareSessionDirs(env, conf); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{home, filepath.Join(home, "run")} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want a private directory", d, fi, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(home, "config", "libvirt", "qemu.conf"))
	if err != nil || string(got) != `security_driver = "none"`+"\n" {
		t.Errorf("session qemu.conf %q, %v", got, err)
	}
	// A second start (a restarted container keeps the emptyDir) is harmless.
	if err := prepareSessionDirs(env, conf); err != nil {
		t.Errorf("second run: %v", err)
	}
}

// With the VM's state claim mounted, libvirt's swtpm directory leads into it, so a persistent
// TPM's state outlives the pod; without one, nothing is linked.
func TestLinkSwtpmState(t *testing.T) {
	dir := t.TempDir()
	config, state := filepath.Join(dir, "config"), filepath.Join(dir, "state")
	if err := linkSwtpmState(config, state); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(config, "libvirt", "qemu", "swtpm")
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("without a state claim: %s exists (%v)", link, err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a restarted container finds the link made
		if err := linkSwtpmState(config, state); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.Readlink(link); err != nil || got != filepath.Join(state, "swtpm") {
		t.Errorf("%s -> %q (%v), want the claim's swtpm/", link, got, err)
	}
	if fi, err := os.Stat(link); err != nil || !fi.IsDir() {
		t.Errorf("the link leads to %v (%v), want a directory", fi, err)
	}
}

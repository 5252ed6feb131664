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

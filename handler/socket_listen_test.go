//go:build linux

package handler

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vmctl/vmctl/launcher/layout"
)

// TestListenLauncherSocket: the socket and every directory on its way belong to the pod's
// user, the pod's user can connect, and a link the pod planted to escape its directory is
// refused.
func TestListenLauncherSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	dir, err := os.MkdirTemp("", "ls")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := listenLauncherSocket(dir, "migration/u1/memory.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, rel := range []string{"migration", "migration/u1", "migration/u1/memory.sock"} {
		fi, err := os.Lstat(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Uid != layout.LauncherUID || st.Gid != layout.LauncherGID {
			t.Errorf("%s owned by %d:%d, want the launcher's user", rel, st.Uid, st.Gid)
		}
	}
	c, err := net.Dial("unix", filepath.Join(dir, "migration/u1/memory.sock"))
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	c.Close()

	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if l, err := listenLauncherSocket(dir, "escape/x.sock"); err == nil {
		l.Close()
		t.Error("listened through a link out of the pod's directory")
	}
}

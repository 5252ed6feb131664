package handler

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/vmctl/vmctl/launcher/layout"
)

// listenLauncherSocket listens on the unix socket rel below dir, a launcher pod's directory,
// for the pod's user (layout.LauncherUID) to connect to. As in dialLauncherSocket the pod owns
// the directories on the way, so they are created and opened inside an os.Root, the socket is
// bound through /proc/self/fd/N of its parent (which also fits sun_path), and its owner is set
// without following a link the pod may have swapped in.
func listenLauncherSocket(dir, rel string) (net.Listener, error) {
	parentRel := path.Dir(rel)
	if err := makeLauncherDir(dir, parentRel); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	parent, err := root.Open(parentRel)
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	pfd, name := int(parent.Fd()), path.Base(rel)
	if err := unix.Unlinkat(pfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("removing a stale %s: %w", rel, err)
	}
	l, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", pfd, name))
	if err != nil {
		return nil, err
	}
	// Closing must not unlink by the /proc path, which is gone with the descriptor.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := unix.Fchownat(pfd, name, layout.LauncherUID, layout.LauncherGID, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}

// makeLauncherDir creates rel below dir (a launcher pod's directory), each directory on the
// way owned by the pod's user.
func makeLauncherDir(dir, rel string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(rel, 0o700); err != nil {
		return err
	}
	for p := rel; p != "." && p != "/"; p = path.Dir(p) {
		if err := root.Lchown(p, layout.LauncherUID, layout.LauncherGID); err != nil {
			return err
		}
	}
	return nil
}

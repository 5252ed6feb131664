package handler

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"time"

	"golang.org/x/sys/unix"
)

// dialTimeout bounds connect() to a launcher's socket.
const dialTimeout = 5 * time.Second

// dialLauncherSocket connects to the unix socket rel below dir without trusting the path. The
// launcher pod owns everything below dir and could swap a directory or the socket for a symlink
// to one of the host's sockets, which the privileged handler would then follow. So the parent
// directory is opened inside an os.Root, the socket itself with O_PATH|O_NOFOLLOW, its type is
// checked on that descriptor, and the connection goes through /proc/self/fd/N: exactly that
// inode, by a path that also fits sun_path (107 bytes; kubelet pod directories alone take more).
// Everything that means "libvirtd is not listening yet" wraps ErrSocketNotReady.
func dialLauncherSocket(dir, rel string) (net.Conn, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSocketNotReady, err)
	}
	defer root.Close()
	parent, err := root.Open(path.Dir(rel))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSocketNotReady, err)
	}
	defer parent.Close()
	fd, err := unix.Openat(int(parent.Fd()), path.Base(rel), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, fmt.Errorf("%w: %s does not exist yet", ErrSocketNotReady, rel)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", rel, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, fmt.Errorf("%s is not a unix socket (mode %#o)", rel, st.Mode)
	}
	conn, err := net.DialTimeout("unix", fmt.Sprintf("/proc/self/fd/%d", fd), dialTimeout)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		// The listen backlog is full: libvirtd is there but does not accept.
		return nil, fmt.Errorf("connecting to %s: %w within %s", rel, errLauncherUnresponsive, dialTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSocketNotReady, err)
	}
	return conn, nil
}

// peerPID reads the socket's SO_PEERCRED; 0 when it is not a unix socket or unreadable.
func peerPID(conn net.Conn) int {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	_ = raw.Control(func(fd uintptr) {
		if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}

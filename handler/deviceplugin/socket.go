package deviceplugin

import (
	"errors"
	"io/fs"
	"net"
	"os"
)

// socket is a plugin's listening unix socket together with the identity (device and inode)
// of the file it created, so that a deleted socket is noticed even if the path is reused.
type socket struct {
	path string
	lis  *net.UnixListener
	info os.FileInfo
}

// listen creates the socket at path. A socket already there is a leftover of a handler that
// did not shut down cleanly (no live plugin of ours owns the name), so it is removed; any
// other kind of file is left alone and makes listen fail.
func listen(path string) (*socket, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	lis, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	// Closing must not unlink the path blindly: once the kubelet has deleted our socket the
	// name may belong to a newer one. remove checks the identity first.
	lis.SetUnlinkOnClose(false)
	info, err := os.Lstat(path)
	if err != nil {
		lis.Close()
		return nil, err
	}
	return &socket{path: path, lis: lis, info: info}, nil
}

// gone reports whether the socket file was deleted or replaced, which is what a starting
// kubelet does to every plugin socket. Errors other than "not found" do not count: they say
// nothing about the kubelet, and restarting the plugin would not help.
func (s *socket) gone() bool {
	fi, err := os.Lstat(s.path)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return !os.SameFile(fi, s.info)
}

// remove closes the listener (grpc.Server.Stop may have done so already) and deletes the
// socket file if it is still the one listen created.
func (s *socket) remove() {
	_ = s.lis.Close()
	if fi, err := os.Lstat(s.path); err == nil && os.SameFile(fi, s.info) {
		_ = os.Remove(s.path)
	}
}

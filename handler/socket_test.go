//go:build linux

package handler

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vmctl/vmctl/launcher/layout"
)

// longDir is a private directory whose socket path exceeds sun_path, as kubelet paths do.
func longDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "pods", strings.Repeat("u", 36), "volumes", "kubernetes.io~empty-dir", "private")
	if err := os.MkdirAll(filepath.Join(dir, "libvirt"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestDialLauncherSocket(t *testing.T) {
	dir := longDir(t)
	sock := filepath.Join(dir, layout.SocketRel)
	if len(sock) <= 108 {
		t.Fatalf("test path too short: %d", len(sock))
	}
	if _, err := dialLauncherSocket(dir, layout.SocketRel); !errors.Is(err, ErrSocketNotReady) {
		t.Fatalf("no socket: %v, want ErrSocketNotReady", err)
	}

	// Listen through the same trick, since the path is too long to bind by name.
	d, err := os.Open(filepath.Join(dir, "libvirt"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(int(d.Fd()))+"/libvirt-sock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			_, _ = c.Write([]byte("hello"))
			_ = c.Close()
		}
	}()
	conn, err := dialLauncherSocket(dir, layout.SocketRel)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 5)
	if _, err := conn.Read(buf); err != nil || string(buf) != "hello" {
		t.Errorf("read %q, %v", buf, err)
	}
}

func TestDialLauncherSocketRefusesNonSockets(t *testing.T) {
	for name, plant := range map[string]func(dir, other string) error{
		"regular file": func(dir, _ string) error { return os.WriteFile(filepath.Join(dir, layout.SocketRel), nil, 0o644) },
		"symlinked socket": func(dir, other string) error {
			return os.Symlink(filepath.Join(other, "host-sock"), filepath.Join(dir, layout.SocketRel))
		},
		"symlinked directory": func(dir, other string) error {
			if err := os.Remove(filepath.Join(dir, "libvirt")); err != nil {
				return err
			}
			return os.Symlink(other, filepath.Join(dir, "libvirt"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, other := longDir(t), t.TempDir()
			l, err := net.Listen("unix", filepath.Join(other, "host-sock"))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if err := os.Symlink("host-sock", filepath.Join(other, "libvirt-sock")); err != nil {
				t.Fatal(err)
			}
			if err := plant(dir, other); err != nil {
				t.Fatal(err)
			}
			if conn, err := dialLauncherSocket(dir, layout.SocketRel); err == nil {
				conn.Close()
				t.Fatal("connected to a socket outside the pod")
			}
		})
	}
}

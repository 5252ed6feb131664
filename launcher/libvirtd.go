package launcher

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/layout"
)

// libvirtd is the pod's libvirt daemon, a child of the launcher.
type libvirtd struct {
	pid    int
	exited <-chan ExitStatus
}

// startLibvirtd runs libvirtd in the foreground (no --daemon: it stays our child, so we learn
// when it dies) with its output on our stderr, where kubectl logs shows it (forwardLibvirtdLog).
// It is a session daemon of the pod's unprivileged user (qemu:///session): its configuration is
// cfg.LibvirtdConf, which puts the socket in the shared directory, and its per-user
// directories are those of layout.LibvirtEnv, in the pod's private emptyDir.
func startLibvirtd(r *Reaper, cfg Config) (*libvirtd, error) {
	// libvirtd creates its socket but not the directory, which the private emptyDir hides.
	// The sockets take no authentication (libvirtd.conf), so the directory is the access
	// control: the pod's user only (the handler is root on the node).
	if err := os.MkdirAll(filepath.Dir(SocketPath(cfg.PrivateDir)), 0o700); err != nil {
		return nil, err
	}
	env := layout.LibvirtEnv()
	if err := prepareSessionDirs(env, cfg.QEMUConf); err != nil {
		return nil, err
	}
	cmd := exec.Command(cfg.Libvirtd, "--config", cfg.LibvirtdConf)
	// One malloc arena: glibc gives each thread that allocates an arena of its own, and what a
	// worker freed after starting the domain stays resident in it for the pod's life.
	cmd.Env = append(append(os.Environ(), env...), "MALLOC_ARENA_MAX=1")
	logs, logw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logw, logw
	exited, err := r.Start(cmd)
	logw.Close() // the child holds its own copy; the pipe ends when libvirtd does
	if err != nil {
		logs.Close()
		return nil, fmt.Errorf("start %s: %w", cfg.Libvirtd, err)
	}
	go func() {
		defer logs.Close()
		forwardLibvirtdLog(logs, os.Stderr)
	}()
	klog.InfoS("started libvirtd", "pid", cmd.Process.Pid)
	return &libvirtd{pid: cmd.Process.Pid, exited: exited}, nil
}

// prepareSessionDirs creates HOME and the XDG directories named in env, and puts qemuConf where
// a session daemon reads the QEMU driver's configuration: $XDG_CONFIG_HOME/libvirt/qemu.conf.
func prepareSessionDirs(env []string, qemuConf string) error {
	var configHome string
	for _, kv := range env {
		name, dir, _ := strings.Cut(kv, "=")
		if name != "HOME" && !strings.HasPrefix(name, "XDG_") {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if name == "XDG_CONFIG_HOME" {
			configHome = dir
		}
	}
	if err := linkSwtpmState(configHome, layout.VMStateDir); err != nil {
		return err
	}
	conf, err := os.ReadFile(qemuConf)
	if err != nil {
		return err
	}
	dst := filepath.Join(configHome, "libvirt", "qemu.conf")
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return os.WriteFile(dst, conf, 0o600)
}

// linkSwtpmState points the session libvirtd's swtpm directory (where a TPM's state lives, a
// directory per domain UUID) to swtpm/ in stateDir, the VM's state claim, when the pod mounts
// one: a persistent TPM then finds the state its VM's last instance left. libvirt creates the
// directories below it as it needs them.
func linkSwtpmState(configHome, stateDir string) error {
	if _, err := os.Stat(stateDir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	target := filepath.Join(stateDir, "swtpm")
	if err := os.MkdirAll(target, 0o700); err != nil {
		return fmt.Errorf("the TPM's state directory in the VM's state claim: %w", err)
	}
	link := filepath.Join(configHome, "libvirt", "qemu", "swtpm")
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		return err
	}
	if err := os.Symlink(target, link); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// connectWhenReady connects to libvirtd as soon as it accepts connections. The socket file
// appears a moment before libvirtd serves it (and could be a leftover), so only a completed
// libvirt handshake counts; a bare dial-and-close would make libvirtd log an EOF error.
func connectWhenReady(ctx context.Context, d *libvirtd, socket string, timeout time.Duration) (*libvirtConn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(socket); err == nil {
			conn, err := connectLibvirt(socket)
			if err == nil {
				return conn, nil
			}
			klog.V(2).InfoS("libvirtd not ready yet", "err", err)
		}
		select {
		case st := <-d.exited:
			return nil, fmt.Errorf("libvirtd (pid %d) exited before its socket %s was up: %s", d.pid, socket, st)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for libvirtd's socket %s: %w", socket, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

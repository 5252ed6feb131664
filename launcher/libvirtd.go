package launcher

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"k8s.io/klog/v2"
)

// libvirtd is the pod's libvirt daemon, a child of the launcher.
type libvirtd struct {
	pid    int
	exited <-chan ExitStatus
}

// startLibvirtd runs libvirtd in the foreground (no --daemon: it stays our child, so we learn
// when it dies) with its output on our stderr, where kubectl logs shows it. Its configuration
// is the image's /etc/libvirt/libvirtd.conf, which puts the socket in the shared directory.
func startLibvirtd(r *Reaper, binary string) (*libvirtd, error) {
	cmd := exec.Command(binary)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	exited, err := r.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	klog.InfoS("started libvirtd", "pid", cmd.Process.Pid)
	return &libvirtd{pid: cmd.Process.Pid, exited: exited}, nil
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

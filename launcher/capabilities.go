package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/layout"
)

// emulator is the QEMU binary launcher domains run (libvirt's default for x86_64 guests).
const emulator = "/usr/bin/qemu-system-x86_64"

// ProbeCapabilities runs libvirtd as a launcher pod does, has it probe the emulator and copies
// the capabilities cache it wrote into out. It is virt-handler's init container: the handler
// seeds each new launcher pod with the copy, so their libvirtd skips the probe, a QEMU run
// of about a CPU-second. libvirt trusts the cache only while the binaries' ctimes and its own
// version match, which holds for pods of the same image on the same node (they share its
// unpacked layers); anything else makes libvirtd probe again, so a stale copy costs time,
// never correctness.
func ProbeCapabilities(ctx context.Context, cfg Config, out string) error {
	reaper, err := NewReaper()
	if err != nil {
		return err
	}
	defer reaper.Stop()
	socket := SocketPath(cfg.PrivateDir)
	daemon, err := startLibvirtd(reaper, cfg)
	if err != nil {
		return err
	}
	defer stopLibvirtd(daemon, 10*time.Second)
	conn, err := connectWhenReady(ctx, daemon, socket, cfg.SocketTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	start := time.Now()
	if _, err := conn.l.ConnectGetDomainCapabilities(libvirt.OptString{emulator}, libvirt.OptString{"x86_64"}, nil, libvirt.OptString{"qemu"}, 0); err != nil {
		return fmt.Errorf("probing %s: %w", emulator, err)
	}
	klog.InfoS("probed QEMU's capabilities", "emulator", emulator, "took", time.Since(start).Round(time.Millisecond))
	// libvirtd keeps its cache under the XDG directories of layout.LibvirtEnv.
	n, err := copyCapabilities(layout.InPod(layout.CapabilitiesRel), out)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("libvirtd wrote no capabilities cache")
	}
	klog.InfoS("copied the capabilities cache", "files", n, "to", out)
	return nil
}

// copyCapabilities copies the cache's XML files from dir into out and counts them. Each lands
// under a temporary name first, so a reader never sees half a file.
func copyCapabilities(dir, out string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".xml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return n, err
		}
		tmp := filepath.Join(out, "."+e.Name())
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return n, err
		}
		if err := os.Rename(tmp, filepath.Join(out, e.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// stopLibvirtd asks libvirtd to exit and waits up to wait for it.
func stopLibvirtd(d *libvirtd, wait time.Duration) {
	_ = syscall.Kill(d.pid, syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(wait):
		klog.InfoS("libvirtd did not exit after SIGTERM", "pid", d.pid, "waited", wait)
	}
}

package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/downwardmetrics"
	"github.com/vmctl/vmctl/launcher/layout"
	"github.com/vmctl/vmctl/launcher/network"
)

// Network bindings the launcher can plumb.
const (
	NetworkMasquerade = "masquerade"
	// NetworkBridge gives the guest the pod's own address (KubeVirt's bridge binding).
	NetworkBridge = "bridge"
	// NetworkNone leaves the pod network alone: for instances without a pod interface, or
	// with QEMU's user-mode networking, whose port forwards listen on the pod IP themselves.
	NetworkNone = "none"
)

// Config is one launcher's instance and environment.
type Config struct {
	Name, Namespace, UID string
	// GracePeriod is how long the guest may take to shut down after SIGTERM.
	GracePeriod time.Duration
	// Hostname is what DHCP offers the guest; the instance's name when empty.
	Hostname string
	// Network is NetworkMasquerade or NetworkNone.
	Network string
	// PrivateDir holds libvirt/libvirt-sock and console.log.
	PrivateDir string
	// Libvirtd is the daemon's binary; LibvirtdConf its configuration file, and QEMUConf the
	// QEMU driver's, which a session daemon reads from its XDG_CONFIG_HOME.
	Libvirtd, LibvirtdConf, QEMUConf string
	// NetworkWait bounds the wait for virt-handler to plumb the pod network.
	NetworkWait time.Duration
	// SocketTimeout bounds the wait for libvirtd's socket.
	SocketTimeout time.Duration
	// DHCPOptions are the pod interface's extra DHCP options.
	DHCPOptions network.Options
	// AgentSSHKeys are set in the guest through its agent.
	AgentSSHKeys []AgentKeys
	// AgentPasswords are the mounts of Secrets whose passwords (user name: password) are set
	// in the guest through its agent.
	AgentPasswords []string
	// DownwardMetricsDisk and DownwardMetricsPort serve the guest the node's and its own
	// metrics on a disk and on a virtio-serial port (package downwardmetrics); NodeName is
	// the node's name they report.
	DownwardMetricsDisk, DownwardMetricsPort bool
	NodeName                                 string
}

// SocketPath is the pod's libvirt socket under the private directory.
func SocketPath(privateDir string) string { return filepath.Join(privateDir, layout.SocketRel) }

// ConsoleLogPath is where QEMU writes the guest's serial console.
func ConsoleLogPath(privateDir string) string { return filepath.Join(privateDir, layout.ConsoleLogRel) }

// Run runs the launcher until its domain is gone or ctx ends (SIGTERM) and returns the exit
// status: 0 after a guest shutdown or SIGTERM, 1 when the domain failed. An error means 1.
func Run(ctx context.Context, cfg Config) (int, error) {
	if cfg.Name == "" || cfg.Namespace == "" {
		return 1, errors.New("--name and --namespace are required")
	}
	domain := layout.DomainName(cfg.Namespace, cfg.Name)
	klog.InfoS("virt-launcher starting", "domain", domain, "uid", cfg.UID, "gracePeriod", cfg.GracePeriod, "network", cfg.Network)

	if cfg.Network != NetworkMasquerade && cfg.Network != NetworkBridge && cfg.Network != NetworkNone {
		return 1, fmt.Errorf("--network %q: want %q, %q or %q", cfg.Network, NetworkMasquerade, NetworkBridge, NetworkNone)
	}
	reaper, err := NewReaper()
	if err != nil {
		return 1, err
	}
	defer reaper.Stop()

	// The disk exists before libvirtd does: virt-handler defines the domain through libvirtd,
	// and QEMU opens the disk when it starts.
	if cfg.DownwardMetricsDisk {
		if err := createMetricsDisk(cfg.PrivateDir); err != nil {
			return 1, fmt.Errorf("downward metrics disk: %w", err)
		}
	}
	socket := SocketPath(cfg.PrivateDir)
	daemon, err := startLibvirtd(reaper, cfg)
	if err != nil {
		return 1, err
	}
	start := time.Now()
	conn, err := connectWhenReady(ctx, daemon, socket, cfg.SocketTimeout)
	if err != nil {
		if ctx.Err() != nil {
			// SIGTERM before libvirtd was up: there can be no domain yet.
			klog.InfoS("SIGTERM before libvirtd was ready, exiting")
			return 0, nil
		}
		return 1, err
	}
	defer conn.Close()
	klog.InfoS("connected to libvirtd", "socket", socket, "after", time.Since(start).Round(time.Millisecond))

	// virt-handler plumbs the pod network once libvirtd's socket is up (it finds the pod's
	// network namespace through it), and starts the domain once the guest's DHCP is served.
	if cfg.Network != NetworkNone {
		hostname := cfg.Hostname
		if hostname == "" {
			hostname = cfg.Name
		}
		netCfg := network.DefaultConfig(hostname, cfg.NetworkWait)
		netCfg.Options = cfg.DHCPOptions
		if cfg.Network == NetworkBridge {
			netCfg.LeaseFile = filepath.Join(cfg.PrivateDir, layout.GuestLeaseRel)
		}
		m, err := network.ServeGuest(ctx, netCfg)
		if ctx.Err() != nil {
			klog.InfoS("SIGTERM before the pod network was ready, exiting")
			return 0, nil
		}
		if err != nil {
			return 1, fmt.Errorf("%s network: %w", cfg.Network, err)
		}
		defer m.Close()
		if err := os.WriteFile(filepath.Join(cfg.PrivateDir, layout.NetworkReadyRel), nil, 0o644); err != nil {
			return 1, err
		}
	}

	if cfg.DownwardMetricsDisk || cfg.DownwardMetricsPort {
		metricsCtx, stop := context.WithCancel(ctx)
		defer stop()
		go downwardmetrics.Run(metricsCtx, metricsConfig(cfg, conn.guestStats(domain)))
	}
	creds := append(keyCredentials(cfg.AgentSSHKeys, conn.setAuthorizedKeys(domain)),
		passwordCredentials(cfg.AgentPasswords, conn.setUserPassword(domain))...)
	if len(creds) > 0 {
		credsCtx, stop := context.WithCancel(ctx)
		defer stop()
		go propagateCredentials(credsCtx, creds)
	}
	return watch(conn, watchConfig{Domain: domain, Grace: cfg.GracePeriod, StopWait: 10 * time.Second}, ctx.Done(), daemon.exited)
}

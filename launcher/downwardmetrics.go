package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"k8s.io/utils/ptr"

	"github.com/vmctl/vmctl/launcher/downwardmetrics"
	"github.com/vmctl/vmctl/launcher/layout"
)

func createMetricsDisk(privateDir string) error {
	path := filepath.Join(privateDir, layout.DownwardMetricsDiskRel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return downwardmetrics.CreateDisk(path)
}

func metricsConfig(cfg Config, stats func() (downwardmetrics.VMStats, error)) downwardmetrics.Config {
	out := downwardmetrics.Config{Node: cfg.NodeName, Stats: stats, Host: downwardmetrics.NodeHost()}
	if cfg.DownwardMetricsDisk {
		out.Disk = filepath.Join(cfg.PrivateDir, layout.DownwardMetricsDiskRel)
	}
	if cfg.DownwardMetricsPort {
		out.Socket = filepath.Join(cfg.PrivateDir, layout.DownwardMetricsSocketRel)
	}
	return out
}

// guestStats reads the domain's figures for its downward metrics: the time its virtual CPUs
// ran, their number, its memory and QEMU's version (asked once: it never changes in a
// launcher's life). It fails while the domain does not run. The disk's writer and the port's
// server call it at once.
func (c *libvirtConn) guestStats(domain string) func() (downwardmetrics.VMStats, error) {
	var hypervisor atomic.Pointer[string]
	return func() (downwardmetrics.VMStats, error) {
		dom, err := c.l.DomainLookupByName(domain)
		if err != nil {
			return downwardmetrics.VMStats{}, err
		}
		_, _, memory, vcpus, _, err := c.l.DomainGetInfo(dom)
		if err != nil {
			return downwardmetrics.VMStats{}, err
		}
		info, _, err := c.l.DomainGetVcpus(dom, int32(vcpus), 0)
		if err != nil {
			return downwardmetrics.VMStats{}, err
		}
		s := downwardmetrics.VMStats{VCPUs: uint64(vcpus), MemoryKiB: memory}
		for _, v := range info {
			s.CPUTime += time.Duration(v.CPUTime)
		}
		if hypervisor.Load() == nil {
			if v, err := c.l.ConnectGetVersion(); err == nil {
				// libvirt's encoding: major * 1,000,000 + minor * 1,000 + micro.
				hypervisor.Store(ptr.To(fmt.Sprintf("%d.%d.%d", v/1000000, v/1000%1000, v%1000)))
			}
		}
		s.Hypervisor = ptr.Deref(hypervisor.Load(), "")
		return s, nil
	}
}

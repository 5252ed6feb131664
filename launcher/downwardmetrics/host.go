package downwardmetrics

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/sysfs"
	"k8s.io/klog/v2"
)

// Host reads the node's figures. A launcher pod sees the node's /proc/meminfo, /proc/stat
// and /proc/vmstat and its /sys: these files are not namespaced.
type Host struct {
	Proc, Sys string
}

// NodeHost reads the node's own /proc and /sys.
func NodeHost() Host { return Host{Proc: "/proc", Sys: "/sys"} }

// Metrics are KubeVirt's host figures, as of now.
func (h Host) Metrics(now time.Time) []Metric {
	var out []Metric
	if n, err := h.physicalCPUs(); err == nil {
		out = append(out, unsigned(contextHost, "NumberOfPhysicalCPUs", "", n))
	} else {
		klog.V(2).InfoS("downward metrics: no CPU topology", "err", err)
	}
	fs, err := procfs.NewFS(h.Proc)
	if err != nil {
		klog.V(2).InfoS("downward metrics: no /proc", "err", err)
		return append(out, clock(now))
	}
	if stat, err := fs.Stat(); err == nil {
		busy := stat.CPUTotal.User + stat.CPUTotal.Nice + stat.CPUTotal.System
		out = append(out, seconds(contextHost, "TotalCPUTime", time.Duration(busy*float64(time.Second))))
	}
	if m, err := fs.Meminfo(); err == nil {
		free, swapFree := value(m.MemFree), value(m.SwapFree)
		total, swapTotal := value(m.MemTotal), value(m.SwapTotal)
		cache := value(m.Buffers) + value(m.Cached)
		out = append(out,
			unsigned(contextHost, "FreePhysicalMemory", "KiB", free),
			unsigned(contextHost, "FreeVirtualMemory", "KiB", free+swapFree),
			// What processes (the node's guests among them) hold: not free, not cache.
			unsigned(contextHost, "MemoryAllocatedToVirtualServers", "KiB", total-free-cache),
			unsigned(contextHost, "UsedVirtualMemory", "KiB", total+swapTotal-free-cache-value(m.SwapCached)),
		)
	}
	if in, outPages, err := swapPages(filepath.Join(h.Proc, "vmstat")); err == nil {
		pageKiB := uint64(os.Getpagesize()) / 1024
		out = append(out,
			unsigned(contextHost, "PagedInMemory", "KiB", in*pageKiB),
			unsigned(contextHost, "PagedOutMemory", "KiB", outPages*pageKiB))
	}
	return append(out, clock(now))
}

// clock is the node's time, as vhostmd reports it: seconds since the epoch.
func clock(now time.Time) Metric {
	return Metric{Type: "int64", Context: contextHost, Unit: "s", Name: "Time", Value: strconv.FormatInt(now.Unix(), 10)}
}

// physicalCPUs counts the node's CPU packages (sockets).
func (h Host) physicalCPUs() (uint64, error) {
	fs, err := sysfs.NewFS(h.Sys)
	if err != nil {
		return 0, err
	}
	cpus, err := fs.CPUs()
	if err != nil {
		return 0, err
	}
	packages := map[string]bool{}
	for _, cpu := range cpus {
		t, err := cpu.Topology()
		if err != nil {
			return 0, err
		}
		packages[t.PhysicalPackageID] = true
	}
	return uint64(len(packages)), nil
}

// swapPages reads the pages swapped in and out since boot from /proc/vmstat.
func swapPages(path string) (in, out uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, v, ok := strings.Cut(s.Text(), " ")
		if !ok || (name != "pswpin" && name != "pswpout") {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "pswpin" {
			in = n
		} else {
			out = n
		}
	}
	return in, out, s.Err()
}

func value(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

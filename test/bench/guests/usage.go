package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// summary is the part of the kubelet's /stats/summary the bench reads.
type summary struct {
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		CPU struct {
			UsageCoreNanoSeconds uint64 `json:"usageCoreNanoSeconds"`
		} `json:"cpu"`
		Memory struct {
			WorkingSetBytes uint64 `json:"workingSetBytes"`
		} `json:"memory"`
	} `json:"pods"`
}

func (b *bench) stats(ctx context.Context) (*summary, error) {
	raw, err := b.kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", b.node, "proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var s summary
	return &s, json.Unmarshal(raw, &s)
}

// launcherOverhead is, for each launcher pod of the namespace, its cgroup's working set less
// its guest's RAM, in MiB: what running a VM costs beyond the VM itself. The kubelet refreshes
// its statistics every few seconds, so it waits (a minute at most) until want pods show.
func (b *bench) launcherOverhead(ctx context.Context, namespace string, want int) ([]float64, error) {
	guest := float64(b.memory.Value()) / (1 << 20)
	var out []float64
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := b.stats(ctx)
		if err != nil {
			return false, err
		}
		out = out[:0]
		for _, p := range s.Pods {
			if p.PodRef.Namespace == namespace && strings.HasPrefix(p.PodRef.Name, "virt-launcher-") && p.Memory.WorkingSetBytes > 0 {
				out = append(out, float64(p.Memory.WorkingSetBytes)/(1<<20)-guest)
			}
		}
		return len(out) >= want, nil
	})
	if wait.Interrupted(err) {
		klog.InfoS("not every launcher pod in the kubelet's statistics yet", "found", len(out), "want", want)
		err = nil
	}
	return out, err
}

// cpuSeconds is the CPU time each component has used so far: the project's pods from the
// kubelet's statistics (the launcher pods, guests included, and vmctl together), and the
// cluster's own processes from /proc.
func (b *bench) cpuSeconds(ctx context.Context) (map[string]float64, error) {
	s, err := b.stats(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, p := range s.Pods {
		if c := podComponent(p.PodRef.Namespace, p.PodRef.Name); c != "" {
			out[c] += float64(p.CPU.UsageCoreNanoSeconds) / 1e9
		}
	}
	pidFiles, _ := filepath.Glob(filepath.Join(b.o.cluster, "pids", "*.pid"))
	for _, f := range pidFiles {
		pid, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if secs, ok := processCPU(strings.TrimSpace(string(pid))); ok {
			out[strings.TrimSuffix(filepath.Base(f), ".pid")] += secs
		}
	}
	return out, nil
}

func podComponent(namespace, name string) string {
	for _, c := range []string{"virt-controller", "virt-handler", "virt-api"} {
		if namespace == "kubevirt" && strings.HasPrefix(name, c+"-") {
			return c
		}
	}
	switch {
	case strings.HasPrefix(namespace, "bench-") && strings.HasPrefix(name, "virt-launcher-"):
		return "launcher pods (guests included)"
	case strings.HasPrefix(namespace, "bench-") && strings.HasPrefix(name, "vmctl-"):
		return "vmctl"
	}
	return ""
}

// processCPU is a process's user plus system time in seconds, from /proc/PID/stat.
func processCPU(pid string) (float64, bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, false
	}
	// The command name may hold spaces; the fields after it are fixed.
	_, rest, ok := strings.Cut(string(stat), ") ")
	fields := strings.Fields(rest)
	if !ok || len(fields) < 13 {
		return 0, false
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	const clockTicks = 100 // USER_HZ on Linux
	return (utime + stime) / clockTicks, true
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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

// usage is the CPU time (seconds) each component has used so far, and the memory (MiB) it
// holds now: the project's pods from the kubelet's statistics (CPU only for the launcher pods,
// guests included, and vmctl, whose memory the per-VM figures cover), and the cluster's own
// processes from /proc.
func (b *bench) usage(ctx context.Context) (cpu, memory map[string]float64, err error) {
	s, err := b.stats(ctx)
	if err != nil {
		return nil, nil, err
	}
	cpu, memory = map[string]float64{}, map[string]float64{}
	for _, p := range s.Pods {
		c := podComponent(p.PodRef.Namespace, p.PodRef.Name)
		if c == "" {
			continue
		}
		cpu[c] += float64(p.CPU.UsageCoreNanoSeconds) / 1e9
		if p.PodRef.Namespace == "kubevirt" {
			memory[c] += float64(p.Memory.WorkingSetBytes) / (1 << 20)
		}
	}
	pidFiles, _ := filepath.Glob(filepath.Join(b.o.cluster, "pids", "*.pid"))
	for _, f := range pidFiles {
		pid, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".pid")
		if secs, rss, ok := processUsage(strings.TrimSpace(string(pid))); ok {
			cpu[name] += secs
			memory[name] += rss
		}
	}
	return cpu, memory, nil
}

func podComponent(namespace, name string) string {
	for _, c := range []string{"virt-controller", "virt-handler", "virt-api"} {
		if namespace == "kubevirt" && strings.HasPrefix(name, c+"-") {
			return c
		}
	}
	switch {
	case ownNamespace(namespace) && strings.HasPrefix(name, "virt-launcher-"):
		return "launcher pods (guests included)"
	case ownNamespace(namespace) && strings.HasPrefix(name, "vmctl-"):
		return "vmctl"
	}
	return ""
}

// processUsage is a process's CPU seconds (its children's included) and its resident
// memory in MiB.
func processUsage(pid string) (cpu, rss float64, ok bool) {
	st, ok := readProc(pid)
	return st.cpu, st.rssPages * float64(os.Getpagesize()) / (1 << 20), ok
}

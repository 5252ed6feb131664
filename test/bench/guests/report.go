package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

type report struct {
	Date        string  `json:"date"`
	VMs         int     `json:"vms"`
	Interval    string  `json:"interval"`
	GuestMemory string  `json:"guestMemory"`
	Floor       *result `json:"floorPods"`
	Direct      *result `json:"directVMs"`
	Vmctl       *result `json:"vmctlDeployment,omitempty"`
}

// result is one scenario's figures; the per-VM maps are by component.
type result struct {
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"`
	// Latency is creation -> Running (floor: pod Running), per item in seconds.
	Latency        stats              `json:"creationToRunning"`
	ScheduledToRun stats              `json:"scheduledToRunning"`
	LibvirtStart   []float64          `json:"libvirtDefinedToStarted"`
	OverheadMiB    []float64          `json:"launcherOverheadMiB"`
	Writes         map[string]float64 `json:"writes"`
	Events         map[string]float64 `json:"eventWrites"`
	WritesPerVM    float64            `json:"writesPerVM"`
	EventsPerVM    float64            `json:"eventWritesPerVM"`
	CPUPerVM       map[string]float64 `json:"cpuSecondsPerVM"`
	// MemoryMiB is what each component holds once the scenario's items run.
	MemoryMiB map[string]float64 `json:"memoryMiB"`
}

type stats struct {
	P50     float64   `json:"p50"`
	P95     float64   `json:"p95"`
	Max     float64   `json:"max"`
	Samples []float64 `json:"samples"`
}

func newStats(values []float64) stats {
	if len(values) == 0 {
		return stats{}
	}
	sorted := slices.Sorted(slices.Values(values))
	at := func(q float64) float64 { return sorted[int(q*float64(len(sorted)-1)+0.5)] }
	return stats{P50: at(0.5), P95: at(0.95), Max: sorted[len(sorted)-1], Samples: values}
}

func (r *result) latencies(samples []sample) {
	var total, scheduled []float64
	for _, s := range samples {
		total = append(total, s.running.Sub(s.created).Seconds())
		if !s.scheduled.IsZero() {
			scheduled = append(scheduled, s.running.Sub(s.scheduled).Seconds())
		}
	}
	r.Latency, r.ScheduledToRun = newStats(total), newStats(scheduled)
}

func (r *result) perVM(cpuBefore, cpuAfter map[string]float64) {
	n := float64(r.Count)
	for _, w := range r.Writes {
		r.WritesPerVM += w / n
	}
	for _, e := range r.Events {
		r.EventsPerVM += e / n
	}
	r.CPUPerVM = map[string]float64{}
	for c, after := range cpuAfter {
		if d := after - cpuBefore[c]; d > 0.005*n {
			r.CPUPerVM[c] = d / n
		}
	}
}

// Published KubeVirt figures the issue compares with.
const (
	kubevirtLatency  = "P50 15-23 s, P95 20-30 s (CI bound P95 <= 60 s)"
	kubevirtWrites   = "~19 from its controller alone"
	kubevirtOverhead = "~220 MiB"
)

func (r *report) markdown() string {
	var b strings.Builder
	cols := []*result{r.Floor, r.Direct}
	head := "| Measure | floor: launcher pods, no VM | (a) VMs | "
	if r.Vmctl != nil {
		cols = append(cols, r.Vmctl)
		head += "(b) vmctl Deployment | "
	}
	fmt.Fprintf(&b, "make bench, %s: %d items %s apart on the real node, test guest with %s RAM\n\n", r.Date, r.VMs, r.Interval, r.GuestMemory)
	fmt.Fprintf(&b, "%sgoal | KubeVirt |\n|%s\n", head, strings.Repeat("---|", len(cols)+3))
	row := func(name, goal, peer string, cell func(*result) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", cell(c))
		}
		fmt.Fprintf(&b, " %s | %s |\n", goal, peer)
	}
	row("creation -> Running P50 / P95 / max (s)", "", kubevirtLatency, func(c *result) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f", c.Latency.P50, c.Latency.P95, c.Latency.Max)
	})
	row("P95 / floor P95", "<= 1.3x", "", func(c *result) string { return fmt.Sprintf("%.2fx", c.Latency.P95/r.Floor.Latency.P95) })
	row("Scheduled -> Running P50 / P95 (s)", "", "", func(c *result) string {
		if len(c.ScheduledToRun.Samples) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f / %.1f", c.ScheduledToRun.P50, c.ScheduledToRun.P95)
	})
	row("libvirt domain defined -> started P50 / P95 (s, floor of the node side)", "", "", func(c *result) string {
		if len(c.LibvirtStart) == 0 {
			return "-"
		}
		s := newStats(c.LibvirtStart)
		return fmt.Sprintf("%.0f / %.0f", s.P50, s.P95)
	})
	row("API writes per VM, all components (of which events)", "<= 8", kubevirtWrites, func(c *result) string {
		return fmt.Sprintf("%.1f (%.1f)", c.WritesPerVM, c.EventsPerVM)
	})
	row("launcher working set - guest RAM, median / max (MiB)", "<= 60", kubevirtOverhead, func(c *result) string {
		if len(c.OverheadMiB) == 0 {
			return "-"
		}
		s := newStats(c.OverheadMiB)
		return fmt.Sprintf("%.0f / %.0f", s.P50, s.Max)
	})
	components := map[string]bool{}
	for _, c := range cols {
		for k := range c.Writes {
			components["writes: "+k] = true
		}
		for k := range c.CPUPerVM {
			components["CPU s: "+k] = true
		}
		for k := range c.MemoryMiB {
			components["memory MiB: "+k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(components)) {
		kind, name, _ := strings.Cut(k, ": ")
		title := fmt.Sprintf("%s per VM: %s", kind, name)
		if kind == "memory MiB" {
			title = fmt.Sprintf("memory (RSS / working set, MiB) after: %s", name)
		}
		row(title, "", "", func(c *result) string {
			switch kind {
			case "writes":
				return fmt.Sprintf("%.2f (%.2f)", c.Writes[name]/float64(c.Count), c.Events[name]/float64(c.Count))
			case "memory MiB":
				return fmt.Sprintf("%.0f", c.MemoryMiB[name])
			}
			return fmt.Sprintf("%.2f", c.CPUPerVM[name])
		})
	}
	return b.String()
}

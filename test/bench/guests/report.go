package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

type report struct {
	Date string `json:"date"`
	VMs  int    `json:"vms"`
	// VmctlReplicas is scenario b's count; either scenario may be skipped (0).
	VmctlReplicas int     `json:"vmctlReplicas"`
	Interval      string  `json:"interval"`
	GuestMemory   string  `json:"guestMemory"`
	Floor         *result `json:"floorPods"`
	Direct        *result `json:"directVMs"`
	// FloorDeployment is the vmctl Deployment's floor: a Deployment of floor pods.
	FloorDeployment *result `json:"floorDeployment,omitempty"`
	Vmctl           *result `json:"vmctlDeployment,omitempty"`
	// Capped says which scenarios ran fewer items than asked, and why (fit.go).
	Capped []string `json:"capped,omitempty"`
}

// Published KubeVirt figures the issue compares with.
const (
	kubevirtLatency  = "P50 15-23 s, P95 20-30 s (CI bound P95 <= 60 s)"
	kubevirtWrites   = "~19 from its controller alone"
	kubevirtOverhead = "~220 MiB"
)

// column is one scenario in the table and the floor it is compared with (itself for a floor).
type column struct {
	title    string
	r, floor *result
}

func (r *report) columns() []column {
	var cols []column
	if r.Direct != nil {
		cols = append(cols, column{"floor: launcher pods booting QEMU directly", r.Floor, r.Floor}, column{"(a) VMs", r.Direct, r.Floor})
	}
	if r.Vmctl != nil {
		cols = append(cols, column{"floor: a Deployment of those pods", r.FloorDeployment, r.FloorDeployment},
			column{"(b) vmctl Deployment", r.Vmctl, r.FloorDeployment})
	}
	return cols
}

func (r *report) markdown() string {
	var b strings.Builder
	cols := r.columns()
	fmt.Fprintf(&b, "make bench, %s: (a) %d VMs, (b) %d vmctl replicas, each item %s after the last on the real node, test guest with %s RAM\n\n",
		r.Date, r.VMs, r.VmctlReplicas, r.Interval, r.GuestMemory)
	for _, c := range r.Capped {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	if len(r.Capped) > 0 {
		fmt.Fprintln(&b)
	}
	fmt.Fprint(&b, "| Measure |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.title)
	}
	fmt.Fprintf(&b, " goal | KubeVirt |\n|%s\n", strings.Repeat("---|", len(cols)+3))
	row := func(name, goal, peer string, cell func(c column) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, c := range cols {
			fmt.Fprintf(&b, " %s |", cell(c))
		}
		fmt.Fprintf(&b, " %s | %s |\n", goal, peer)
	}
	pct := func(s stats) string { return fmt.Sprintf("%.1f / %.1f / %.1f", s.P50, s.P95, s.Max) }
	row("creation -> Running P50 / P95 / max (s)", "", kubevirtLatency, func(c column) string { return pct(c.r.Latency) })
	row("creation -> guest marker P50 / P95 / max (s)", "", "", func(c column) string { return pct(c.r.Marker) })
	row("guests that printed no marker (left out of the marker figures)", "0", "", func(c column) string { return fmt.Sprint(len(c.r.NoMarker)) })
	row("marker P95 / its floor's", "<= 1.3x", "", func(c column) string { return fmt.Sprintf("%.2fx", c.r.Marker.P95/c.floor.Marker.P95) })
	row("Scheduled -> Running P50 / P95 (s)", "", "", func(c column) string {
		if len(c.r.ScheduledToRun.Samples) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f / %.1f", c.r.ScheduledToRun.P50, c.r.ScheduledToRun.P95)
	})
	row("CPU s per VM until the marker: launcher pod, P50 / P95", "", "", func(c column) string {
		return fmt.Sprintf("%.2f / %.2f", c.r.PodCPU.P50, c.r.PodCPU.P95)
	})
	row("CPU s per VM beyond the floor's pod (pod P50 + project components - floor pod P50)", "<= 0.5", "", func(c column) string {
		if c.r == c.floor {
			return "-"
		}
		return fmt.Sprintf("%.2f", c.r.PodCPU.P50+c.r.projectCPU()-c.floor.PodCPU.P50)
	})
	row("CPU s per VM the platform adds, QEMU apart (pod parts but QEMU + project components - the floor's)", "", "", func(c column) string {
		if c.r == c.floor {
			return "-"
		}
		return fmt.Sprintf("%.2f", c.r.notQEMU()+c.r.projectCPU()-c.floor.notQEMU())
	})
	row("launcher pod memory beyond guest RAM and TCG cache, P50 / max (MiB, PSS)", "", "", func(c column) string {
		return fmt.Sprintf("%.0f / %.0f", c.r.BeyondGuest.P50, c.r.BeyondGuest.Max)
	})
	row("the same, less the guest's kernelBoot kernel and initrd that QEMU keeps, P50 / max (MiB, PSS)", "<= 40", kubevirtOverhead, func(c column) string {
		return fmt.Sprintf("%.0f / %.0f", c.r.BeyondPayload.P50, c.r.BeyondPayload.Max)
	})
	row("API writes per VM by the project's components (of which events)", "<= 6", kubevirtWrites, func(c column) string {
		w, e := c.r.projectWrites()
		return fmt.Sprintf("%.1f (%.1f)", w, e)
	})
	row("API writes per VM, all components (of which events)", "", "", func(c column) string {
		return fmt.Sprintf("%.1f (%.1f)", c.r.WritesPerVM, c.r.EventsPerVM)
	})
	r.detailRows(cols, row)
	return b.String()
}

// detailRows are one row per part and per component that any column has.
func (r *report) detailRows(cols []column, row func(string, string, string, func(column) string)) {
	keys := map[string]bool{}
	for _, c := range cols {
		for k := range c.r.CPUByPart {
			keys["1 CPU s until the marker, P50: "+k] = true
		}
		for k := range c.r.MemoryByPart {
			keys["2 memory after boot, P50 (MiB, PSS): "+k] = true
		}
		for k := range c.r.Writes {
			keys["3 writes per VM (events): "+k] = true
		}
		for k := range c.r.CPUPerVM {
			keys["4 CPU s per VM during the scenario: "+k] = true
		}
		for k := range c.r.MemoryMiB {
			keys["5 memory (RSS / working set, MiB) after: "+k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		kind, name, _ := strings.Cut(k[2:], ": ")
		row(kind+": "+name, "", "", func(c column) string {
			n := float64(c.r.Count)
			switch k[0] {
			case '1':
				return fmt.Sprintf("%.2f", c.r.CPUByPart[name])
			case '2':
				return fmt.Sprintf("%.1f", c.r.MemoryByPart[name])
			case '3':
				return fmt.Sprintf("%.2f (%.2f)", c.r.Writes[name]/n, c.r.Events[name]/n)
			case '4':
				return fmt.Sprintf("%.2f", c.r.CPUPerVM[name])
			}
			return fmt.Sprintf("%.0f", c.r.MemoryMiB[name])
		})
	}
}

package main

import "slices"

// result is one scenario's figures; the per-VM maps are by component, the by-part maps by part
// of a launcher pod (split.go), as medians over the pods.
type result struct {
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"`
	// Latency is creation -> Running (floor: pod Running), Marker creation -> the guest's
	// marker on its console, per item in seconds.
	Latency stats `json:"creationToRunning"`
	Marker  stats `json:"creationToMarker"`
	// NoMarker are the pods whose guests printed no marker before the bench gave up on them;
	// Marker and the CPU until the marker leave them out.
	NoMarker       []string `json:"podsWithoutMarker,omitempty"`
	ScheduledToRun stats    `json:"scheduledToRunning"`
	// PodCPU is each launcher pod's CPU seconds until its guest's marker.
	PodCPU    stats              `json:"podCPUSecondsToMarker"`
	CPUByPart map[string]float64 `json:"cpuSecondsToMarkerByPart"`
	// MemoryByPart is after every guest booted (proportional set sizes, MiB); BeyondGuest is
	// each pod's memory less its guest's RAM and TCG's translation cache, BeyondPayload less
	// the guest's kernelBoot kernel and initrd too: what the pod costs whatever the guest.
	MemoryByPart  map[string]float64 `json:"memoryMiBByPart"`
	BeyondGuest   stats              `json:"memoryBeyondGuestRAMAndTCGMiB"`
	BeyondPayload stats              `json:"memoryBeyondGuestRAMTCGAndKernelMiB"`
	Writes        map[string]float64 `json:"writes"`
	Events        map[string]float64 `json:"eventWrites"`
	WritesPerVM   float64            `json:"writesPerVM"`
	EventsPerVM   float64            `json:"eventWritesPerVM"`
	CPUPerVM      map[string]float64 `json:"cpuSecondsPerVM"`
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
	var total, marker, scheduled []float64
	for _, s := range samples {
		total = append(total, s.running.Sub(s.created).Seconds())
		if !s.marker.IsZero() {
			marker = append(marker, s.marker.Sub(s.created).Seconds())
		}
		if !s.scheduled.IsZero() {
			scheduled = append(scheduled, s.running.Sub(s.scheduled).Seconds())
		}
	}
	r.Latency, r.Marker, r.ScheduledToRun = newStats(total), newStats(marker), newStats(scheduled)
}

// split reads each sample's launcher pod: its CPU by part until the guest's marker, and its
// memory by part now.
func (r *result) split(samples []sample, w *watcher, cpu *cpuSampler, guestBytes int64) {
	var podCPU, beyond, beyondPayload []float64
	cpuParts, memParts := map[string][]float64{}, map[string][]float64{}
	for _, s := range samples {
		uid := w.uidOf(s.pod)
		if parts, ok := cpu.at(uid, s.marker); ok {
			sum := 0.0
			for k, v := range parts {
				cpuParts[k] = append(cpuParts[k], v)
				sum += v
			}
			podCPU = append(podCPU, sum)
		}
		if parts := memoryByPart(uid, guestBytes); len(parts) > 0 {
			sum := 0.0
			for k, v := range parts {
				memParts[k] = append(memParts[k], v)
				sum += v
			}
			beyond = append(beyond, sum-parts[partGuestRAM]-parts[partTCG])
			beyondPayload = append(beyondPayload, beyond[len(beyond)-1]-parts[partKernel])
		}
	}
	r.PodCPU, r.BeyondGuest, r.BeyondPayload = newStats(podCPU), newStats(beyond), newStats(beyondPayload)
	r.CPUByPart, r.MemoryByPart = medians(cpuParts), medians(memParts)
}

func medians(m map[string][]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = newStats(v).P50
	}
	return out
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

// projectComponents are the platform's own API users and processes (audit.go, usage.go).
var projectComponents = []string{"virt-controller", "virt-handler", "virt-api", "vmctl"}

func isProject(component string) bool { return slices.Contains(projectComponents, component) }

// projectWrites is the API writes per VM by the platform's components, and how many of them
// were events.
func (r *result) projectWrites() (writes, events float64) {
	for c, n := range r.Writes {
		if isProject(c) {
			writes += n / float64(r.Count)
			events += r.Events[c] / float64(r.Count)
		}
	}
	return writes, events
}

// notQEMU is the median CPU seconds until the marker of a launcher pod's parts but QEMU: what
// runs beside the guest. QEMU's own varies by a second from boot to boot under TCG.
func (r *result) notQEMU() float64 {
	sum := 0.0
	for part, v := range r.CPUByPart {
		if part != partQEMU {
			sum += v
		}
	}
	return sum
}

// projectCPU is the CPU seconds per VM of the platform's components.
func (r *result) projectCPU() float64 {
	sum := 0.0
	for c, v := range r.CPUPerVM {
		if isProject(c) {
			sum += v
		}
	}
	return sum
}

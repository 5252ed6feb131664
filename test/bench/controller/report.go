package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

type result struct {
	Date  string `json:"date"`
	Count int    `json:"count"`
	Nodes int    `json:"kwokNodes"`
	// DeploymentSeconds: a Deployment of Count replicas, created until all pods Running (floor).
	DeploymentSeconds float64 `json:"deploymentSeconds"`
	// VMSeconds: Count VMs, the first created until every instance Scheduled.
	VMSeconds float64 `json:"vmSeconds"`
	Stages    stages  `json:"stages"`
	Ratio     float64 `json:"ratioToFloor"`
	// Writes are every component's mutating requests while the VMs started, by verb and
	// resource, until virt-controller stopped writing. FloorWrites and ScheduledWrites are the
	// ones each phase made until its clock stopped, as its CPU seconds.
	Writes          writes `json:"writes"`
	FloorWrites     writes `json:"floorWrites"`
	ScheduledWrites writes `json:"scheduledWrites"`
	// ControllerWrites are the ones virt-controller makes, per VM.
	ControllerWrites      map[string]float64 `json:"controllerWritesPerVM"`
	ControllerWritesPerVM float64            `json:"controllerWritesPerVMTotal"`
	EventsPerVM           float64            `json:"eventWritesPerVMAllComponents"`
	// FloorCPU and VMCPU are CPU seconds by process during the floor and until every VMI is
	// Scheduled: on 2 cores, what the API server spends is what the rest waits for.
	FloorCPU cpuTimes `json:"floorCPUSeconds"`
	VMCPU    cpuTimes `json:"vmCPUSeconds"`
	// Webhooks are the admission webhook calls the VM phase made, by webhook.
	Webhooks          webhookCalls `json:"webhooks"`
	ControllerRSS     float64      `json:"controllerRSSMiB"`
	ControllerPeakRSS float64      `json:"controllerPeakRSSMiB"`
}

// controllerWrite says whether virt-controller made a write: during the VM phase nothing else
// writes VMs (but the bench's creates), instances, or creates pods.
func controllerWrite(key string) bool {
	verb, resource, _ := strings.Cut(key, " ")
	switch {
	case strings.HasPrefix(resource, "virtualmachineinstances"):
		return true
	case strings.HasPrefix(resource, "virtualmachines"):
		return !(verb == "POST" && resource == "virtualmachines")
	}
	return key == "POST pods"
}

func (r *result) summarise() {
	r.Ratio = r.VMSeconds / r.DeploymentSeconds
	r.ControllerWrites = map[string]float64{}
	for key, n := range r.Writes {
		perVM := n / float64(r.Count)
		switch {
		case controllerWrite(key):
			r.ControllerWrites[key] = perVM
			r.ControllerWritesPerVM += perVM
		case strings.HasSuffix(key, " events"):
			r.EventsPerVM += perVM
		}
	}
}

func (r *result) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bench-controller, %s: %d VMs on %d kwok nodes\n\n", r.Date, r.Count, r.Nodes)
	fmt.Fprintf(&b, "| Measure | Value | Floor or goal | Ratio |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d VMs created -> all VMIs Scheduled | %.1f s | Deployment of %d: pods Running in %.1f s | %.2fx (goal <= 1.5x) |\n",
		r.Count, r.VMSeconds, r.Count, r.DeploymentSeconds, r.Ratio)
	fmt.Fprintf(&b, "| stages: all VMs created / all VMIs created / all Scheduled | %.1f / %.1f / %.1f s | | |\n",
		r.Stages.VMsCreated, r.Stages.VMIsCreated, r.Stages.Scheduled)
	fmt.Fprintf(&b, "| virt-controller API writes per VM | %.2f | goal <= 4 | %.2fx |\n", r.ControllerWritesPerVM, r.ControllerWritesPerVM/4)
	fmt.Fprintf(&b, "| events per VM (all components) | %.2f | | |\n", r.EventsPerVM)
	fmt.Fprintf(&b, "| virt-controller RSS after / peak | %.0f / %.0f MiB | goal <= 150 MiB | %.2fx |\n\n", r.ControllerRSS, r.ControllerPeakRSS, r.ControllerPeakRSS/150)
	fmt.Fprintf(&b, "| CPU seconds of | Deployment (floor) | VMs |\n|---|---|---|\n")
	var floorSum, vmSum float64
	for _, name := range cpuProcesses {
		label := name
		if name == "controller" {
			label = "this bench (go run's binary)"
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f |\n", label, r.FloorCPU[name], r.VMCPU[name])
		floorSum, vmSum = floorSum+r.FloorCPU[name], vmSum+r.VMCPU[name]
	}
	fmt.Fprintf(&b, "| all of these (cores busy) | %.1f (%.2f) | %.1f (%.2f) |\n",
		floorSum, floorSum/r.DeploymentSeconds, vmSum, vmSum/r.VMSeconds)
	// The API server's CPU is mostly its writes' (and their watch events'): a custom resource
	// (JSON, checked against its schema) costs it about three times a built-in one.
	floorAll, floorCustom := r.FloorWrites.total()
	vmAll, vmCustom := r.ScheduledWrites.total()
	n := float64(r.Count)
	fmt.Fprintf(&b, "| API writes per replica, all components (of which custom resources) | %.1f (%.1f) | %.1f (%.1f) |\n",
		floorAll/n, floorCustom/n, vmAll/n, vmCustom/n)
	if floorAll > 0 && vmAll > 0 {
		fmt.Fprintf(&b, "| kube-apiserver CPU ms per write | %.1f | %.1f |\n",
			1000*r.FloorCPU["kube-apiserver"]/floorAll, 1000*r.VMCPU["kube-apiserver"]/vmAll)
	}
	fmt.Fprintf(&b, "\n| webhook (VM phase) | calls | mean latency |\n|---|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(r.Webhooks)) {
		w := r.Webhooks[name]
		fmt.Fprintf(&b, "| %s | %.0f | %.0f ms |\n", name, w.Calls, 1000*w.Seconds/w.Calls)
	}
	fmt.Fprintf(&b, "\n| virt-controller write | per VM |\n|---|---|\n")
	keys := make([]string, 0, len(r.ControllerWrites))
	for k := range r.ControllerWrites {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "| %s | %.2f |\n", k, r.ControllerWrites[k])
	}
	return b.String()
}

// Package vmi is the VirtualMachineInstance controller: it renders each instance's launcher pod
// and moves the instance through Pending, Scheduling (the pod waits for a node) and Scheduled
// (the pod is bound to one) as the pod progresses, and to Failed when the pod fails or
// disappears. Running and the guest's own ends are the node's.
package vmi

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// ReasonPodFailed is the reason of an instance whose launcher pod failed.
const ReasonPodFailed = "PodFailed"

// nextPhase is the phase the VMI controller owns, from the instance's launcher pod (nil when
// none exists). Running, and the ends a guest reaches by itself, are the node's to report;
// this controller ends an instance only when its pod is gone or failed.
func nextPhase(vmi *v1.VirtualMachineInstance, pod *corev1.Pod, podExpected bool) (v1.VirtualMachineInstancePhase, string) {
	phase := vmi.Status.Phase
	if phase.IsFinal() {
		return phase, vmi.Status.Reason
	}
	switch {
	case copying(vmi) && (pod == nil || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed):
		// The source's launcher exits once the guest has moved: the migration's end, which
		// its handler reports, says whether the guest runs on in the target or is lost.
		return phase, vmi.Status.Reason
	case pod == nil && podExpected:
		return v1.Scheduling, ""
	case pod == nil && (phase == v1.VmPhaseUnset || phase == v1.Pending):
		return v1.Pending, ""
	case pod == nil:
		return v1.Failed, "PodDeleted"
	case pod.Status.Phase == corev1.PodFailed:
		return v1.Failed, ReasonPodFailed
	case pod.Status.Phase == corev1.PodSucceeded && phase != v1.Running:
		return v1.Failed, "PodExitedBeforeRunning"
	case pod.Status.Phase == corev1.PodSucceeded:
		// The launcher exits 0 once the guest has shut down.
		return v1.Succeeded, ""
	case phase == v1.Running || phase == v1.Unknown:
		return phase, vmi.Status.Reason
	case pod.Spec.NodeName != "":
		// Bound to a node: KubeVirt's "a target node was selected". The node's handler starts
		// the domain once the pod runs. Waiting for the pod to run as well would cost a status
		// write (Scheduling, then Scheduled) for every pod slower than the hold (sync.go).
		return v1.Scheduled, ""
	}
	return v1.Scheduling, ""
}

// copying: the instance's memory is being copied to a migration's target.
func copying(vmi *v1.VirtualMachineInstance) bool {
	s := vmi.Status.MigrationState
	return s != nil && s.StartTimestamp != nil && !s.Completed
}

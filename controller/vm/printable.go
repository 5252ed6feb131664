package vm

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/launcherpods"
)

// observed is what the VM controller knows when it summarises a VirtualMachine.
type observed struct {
	vm  *v1.VirtualMachine
	vmi *v1.VirtualMachineInstance
	// pod is the instance's launcher pod, when one exists.
	pod *corev1.Pod
	// starting: this sync created an instance, or a creation is still expected.
	starting bool
	// stopping: this controller deleted the instance, and has not seen it gone yet.
	stopping bool
	// backingOff: a start is due but the crash-loop backoff holds it.
	backingOff bool
}

// printableStatus is the one-word summary `kubectl get vm` shows; the first match wins, in
// KubeVirt's order.
func printableStatus(o observed) v1.VirtualMachinePrintableStatus {
	vmi := o.vmi
	exists := vmi != nil
	final := exists && vmi.Status.Phase.IsFinal()
	switch {
	case o.vm.DeletionTimestamp != nil:
		return v1.VirtualMachineStatusTerminating
	case exists && !final && (vmi.DeletionTimestamp != nil || o.stopping):
		return v1.VirtualMachineStatusStopping
	case exists && !final && isMigrating(vmi):
		return v1.VirtualMachineStatusMigrating
	case exists && hasCondition(vmi, v1.VirtualMachineInstancePaused, corev1.ConditionTrue):
		return v1.VirtualMachineStatusPaused
	case exists && vmi.Status.Phase == v1.Running:
		return v1.VirtualMachineStatusRunning
	case exists && !final && waitsForClaim(vmi):
		return v1.VirtualMachineStatusPvcNotFound
	case exists && !final && podUnschedulable(o.pod):
		return v1.VirtualMachineStatusUnschedulable
	case exists && !final && imagePullStatus(o.pod) != "":
		return imagePullStatus(o.pod)
	case o.starting || (exists && isStarting(vmi.Status.Phase)):
		return v1.VirtualMachineStatusStarting
	case o.backingOff:
		return v1.VirtualMachineStatusCrashLoopBackOff
	case !exists || final:
		return v1.VirtualMachineStatusStopped
	}
	return v1.VirtualMachineStatusUnknown
}

// isMigrating: the instance's memory is being copied to another node.
func isMigrating(vmi *v1.VirtualMachineInstance) bool {
	s := vmi.Status.MigrationState
	return s != nil && s.StartTimestamp != nil && s.EndTimestamp == nil && !s.Completed
}

func isStarting(phase v1.VirtualMachineInstancePhase) bool {
	switch phase {
	case v1.VmPhaseUnset, v1.Pending, v1.Scheduling, v1.Scheduled:
		return true
	}
	return false
}

func hasCondition(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType, status corev1.ConditionStatus) bool {
	for _, c := range vmi.Status.Conditions {
		if c.Type == t {
			return c.Status == status
		}
	}
	return false
}

// waitsForClaim: the instance gets no launcher pod until a claim it names exists.
func waitsForClaim(vmi *v1.VirtualMachineInstance) bool {
	c := vmi.Status.Condition(v1.VirtualMachineInstanceSynchronized)
	return c != nil && c.Status == corev1.ConditionFalse && c.Reason == v1.VirtualMachineInstanceReasonPvcNotFound
}

func podUnschedulable(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable
		}
	}
	return false
}

// imagePullStatus is ErrImagePull or ImagePullBackOff while a launcher container waits on its image.
func imagePullStatus(pod *corev1.Pod) v1.VirtualMachinePrintableStatus {
	if cs := launcherpods.WaitingOnImage(pod); cs != nil {
		return v1.VirtualMachinePrintableStatus(cs.State.Waiting.Reason)
	}
	return ""
}

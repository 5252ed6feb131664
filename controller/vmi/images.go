package vmi

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/pkg/launcherpods"
)

// setImagePullCondition mirrors a launcher container that waits on its image as the
// instance's Synchronized condition, as KubeVirt does (an instance has no other way to say its
// image cannot be had), and drops it once no container waits so. Only before Running: from
// then on virt-handler owns the condition, and two writers would take turns rewriting it.
func setImagePullCondition(s *v1.VirtualMachineInstanceStatus, pod *corev1.Pod, phase v1.VirtualMachineInstancePhase, now metav1.Time) {
	if cs := launcherpods.WaitingOnImage(pod); cs != nil && (phase == v1.Scheduling || phase == v1.Scheduled) {
		s.SetCondition(v1.VirtualMachineInstanceCondition{Type: v1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse,
			Reason: cs.State.Waiting.Reason, Message: cs.Name + ": " + cs.State.Waiting.Message}, now)
		return
	}
	s.RemoveCondition(v1.VirtualMachineInstanceSynchronized, launcherpods.ReasonErrImagePull)
	s.RemoveCondition(v1.VirtualMachineInstanceSynchronized, launcherpods.ReasonImagePullBackOff)
}

package vm

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// updateStatusFields computes everything in the VirtualMachine's status but the request
// queue and crash-loop bookkeeping, which the sync already set.
func (c *Controller) updateStatusFields(vm *v1.VirtualMachine, o observed, strategy v1.VirtualMachineRunStrategy, syncErr error) {
	s := &vm.Status
	vmi := o.vmi
	s.Created = vmi != nil
	// An instance on its way out is not ready, whatever it last reported.
	ready := vmi != nil && !vmi.Status.Phase.IsFinal() && vmi.DeletionTimestamp == nil &&
		hasCondition(vmi, v1.VirtualMachineInstanceReady, corev1.ConditionTrue)
	s.Ready = ready
	s.PrintableStatus = printableStatus(o)
	s.RunStrategy = strategy
	s.ObservedGeneration = vm.Generation

	now := metav1.NewTime(c.clock.Now())
	readyCond := v1.VirtualMachineCondition{Type: v1.VirtualMachineReady, Status: corev1.ConditionFalse, Reason: "VMINotExists", Message: "VMI does not exist"}
	if vmi != nil {
		readyCond.Reason, readyCond.Message = "", ""
		for _, cond := range vmi.Status.Conditions {
			if cond.Type == v1.VirtualMachineInstanceReady {
				readyCond.Status, readyCond.Reason, readyCond.Message = cond.Status, cond.Reason, cond.Message
			}
		}
		if !ready {
			readyCond.Status = corev1.ConditionFalse
		}
	}
	setCondition(s, readyCond, now)
	// Paused mirrors the instance's, as KubeVirt's VM does (kubectl wait --for=condition=Paused).
	if paused := pausedCondition(vmi); paused != nil {
		setCondition(s, v1.VirtualMachineCondition{Type: v1.VirtualMachinePaused, Status: corev1.ConditionTrue, Reason: paused.Reason, Message: paused.Message}, now)
	} else {
		removeCondition(s, v1.VirtualMachinePaused)
	}
	setRestartRequired(s, vm, vmi, now)
	if syncErr != nil {
		setCondition(s, v1.VirtualMachineCondition{Type: v1.VirtualMachineFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: syncErr.Error()}, now)
	} else {
		removeCondition(s, v1.VirtualMachineFailure)
	}
}

// pausedCondition is the live instance's Paused condition when it is True, else nil.
func pausedCondition(vmi *v1.VirtualMachineInstance) *v1.VirtualMachineInstanceCondition {
	if vmi == nil || vmi.Status.Phase.IsFinal() || vmi.DeletionTimestamp != nil {
		return nil
	}
	c := vmi.Status.Condition(v1.VirtualMachineInstancePaused)
	if c == nil || c.Status != corev1.ConditionTrue {
		return nil
	}
	return c
}

// setCondition replaces the condition of the same type, keeping its transition time when the
// status did not change, so an unchanged condition never causes a status write.
func setCondition(s *v1.VirtualMachineStatus, cond v1.VirtualMachineCondition, now metav1.Time) {
	for i, existing := range s.Conditions {
		if existing.Type != cond.Type {
			continue
		}
		cond.LastTransitionTime = existing.LastTransitionTime
		if existing.Status != cond.Status {
			cond.LastTransitionTime = now
		}
		s.Conditions[i] = cond
		return
	}
	cond.LastTransitionTime = now
	s.Conditions = append(s.Conditions, cond)
}

func removeCondition(s *v1.VirtualMachineStatus, t v1.VirtualMachineConditionType) {
	kept := s.Conditions[:0]
	for _, c := range s.Conditions {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	s.Conditions = kept
	if len(kept) == 0 {
		s.Conditions = nil
	}
}

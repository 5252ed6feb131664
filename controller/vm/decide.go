package vm

import (
	"time"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// plan is what one sync of a VirtualMachine does about its instance.
type plan struct {
	// createVMI: no instance exists (not even a terminating one) and one should run.
	createVMI bool
	// deleteVMI: the current instance should go (stop, restart, or a final instance to clear).
	deleteVMI bool
	// startPaused: the instance to create starts paused (a Start request asked for it).
	startPaused bool
	// runStrategy, when set, is the VM's new run strategy, written before anything else.
	runStrategy v1.VirtualMachineRunStrategy
	// requests is the state change request queue after this sync.
	requests []v1.VirtualMachineStateChangeRequest
	// backoff > 0: a start is due but the crash-loop backoff holds it this long.
	backoff time.Duration
}

// decide applies the state change requests, then the run strategy, to the VirtualMachine and
// its current instance (nil when none exists). It never plans a creation while an instance
// exists, terminating or not: that is the fencing guarantee.
func decide(vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, strategy v1.VirtualMachineRunStrategy, now time.Time) plan {
	if strategy == v1.RunStrategyHalted {
		deleteVMI := vmi != nil && vmi.DeletionTimestamp == nil
		if reqs := vm.Status.StateChangeRequests; len(reqs) > 0 && reqs[0].StartsPaused() {
			// virtctl start --paused of a halted VM, as in KubeVirt: the controller makes it
			// Always, and the next sync starts it from the request, paused.
			if vmi == nil {
				return plan{runStrategy: v1.RunStrategyAlways, requests: reqs}
			}
			return plan{deleteVMI: deleteVMI, requests: reqs} // the old instance goes first
		}
		// A halted VM has nothing to start or stop: stale requests would fight the strategy.
		return plan{deleteVMI: deleteVMI}
	}
	p, pending, stoppedByRequest := applyRequests(vm.Status.StateChangeRequests, vmi)
	if pending {
		return p
	}
	deleting := vmi != nil && vmi.DeletionTimestamp != nil
	switch strategy {
	case v1.RunStrategyAlways:
		switch {
		case vmi == nil:
			p.startUnlessBackingOff(vm, now)
		case vmi.Status.Phase.IsFinal() && !deleting:
			p.deleteVMI = true
		}
	case v1.RunStrategyRerunOnFailure:
		switch {
		case vmi == nil && !stoppedByRequest:
			p.startUnlessBackingOff(vm, now)
		case vmi != nil && vmi.Status.Phase == v1.Failed && !deleting:
			p.deleteVMI = true
		}
	case v1.RunStrategyOnce:
		p.createVMI = vmi == nil && !stoppedByRequest
	case v1.RunStrategyManual:
		// Only requests start or stop a Manual VirtualMachine.
	}
	return p
}

// applyRequests works through the request queue in order. pending is true while the first
// request still needs the instance to change; stoppedByRequest is true when the queue ends in
// a Stop whose instance is gone: the user stopped the VM and no strategy may restart it.
func applyRequests(reqs []v1.VirtualMachineStateChangeRequest, vmi *v1.VirtualMachineInstance) (p plan, pending, stoppedByRequest bool) {
	for len(reqs) > 0 {
		r := reqs[0]
		switch r.Action {
		case v1.StopRequest:
			if vmi != nil && (r.UID == nil || *r.UID == vmi.UID) {
				p.deleteVMI = vmi.DeletionTimestamp == nil
				p.requests = reqs
				return p, true, false
			}
			if len(reqs) == 1 && vmi == nil {
				// Kept as a marker until a Start request replaces it.
				p.requests = reqs
				return p, false, true
			}
			reqs = reqs[1:]
		case v1.StartRequest:
			switch {
			case vmi == nil:
				p.createVMI, p.startPaused = true, r.StartsPaused()
				p.requests = reqs[1:]
				return p, true, false
			case vmi.Status.Phase.IsFinal():
				// Clear the finished instance first; the start then creates a new one.
				p.deleteVMI = vmi.DeletionTimestamp == nil
				p.requests = reqs
				return p, true, false
			}
			reqs = reqs[1:] // Already running: nothing to start.
		default:
			reqs = reqs[1:] // Unknown actions cannot be acted on; drop them.
		}
	}
	p.requests = reqs
	return p, false, false
}

// startUnlessBackingOff plans a creation, or the wait that the crash-loop backoff imposes.
func (p *plan) startUnlessBackingOff(vm *v1.VirtualMachine, now time.Time) {
	if f := vm.Status.StartFailure; f != nil && f.RetryAfterTimestamp != nil && now.Before(f.RetryAfterTimestamp.Time) {
		p.backoff = f.RetryAfterTimestamp.Sub(now)
		return
	}
	p.createVMI = true
}

// Package subresources is what virt-api does for its subresources. PUT start, stop and
// restart on a VirtualMachine: a pure decision per request (this file), and the HTTP handlers
// that load the VM, apply the decision with conflict retries and answer 202 or 409. PUT pause,
// unpause and softreboot on an instance (lifecycle.go), the console and port-forward: checked
// here, carried out by the virt-handler of the instance's node. GET version (version.go).
package subresources

import (
	"fmt"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Verb is a VirtualMachine subresource.
type Verb string

const (
	Start   Verb = "start"
	Stop    Verb = "stop"
	Restart Verb = "restart"
)

// Decision is what one request does to the VirtualMachine. Exactly one of Conflict,
// RunStrategy and Requests is set.
type Decision struct {
	// Conflict, when set, refuses the request (409) and says why.
	Conflict string
	// RunStrategy is the spec change that carries out the request (Halted <-> Always).
	RunStrategy v1.VirtualMachineRunStrategy
	// Requests become status.stateChangeRequests for the controller to act on (replacing a
	// stop marker, the only thing the queue may hold when a request is accepted).
	Requests []v1.VirtualMachineStateChangeRequest
}

// Decide applies KubeVirt's rules (../shared/notes/api-behaviour.md) to a request on vm,
// whose instance (same name) is vmi, nil when none exists. It never looks at the clock or
// the API: everything it needs is in its arguments, so it is table-tested.
// paused (start only) asks for the instance to start paused.
func Decide(verb Verb, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance, paused bool) Decision {
	strategy, err := vm.Spec.EffectiveRunStrategy()
	if err != nil {
		return conflict("%v", err)
	}
	if reqs := vm.Status.StateChangeRequests; len(reqs) > 0 && !isStopMarker(reqs, vmi) {
		return conflict("VM %s has a %s request pending; try again once the controller has acted on it",
			vm.Name, reqs[0].Action)
	}
	if vm.DeletionTimestamp != nil {
		return conflict("VM %s is being deleted", vm.Name)
	}
	running := vmi != nil && vmi.DeletionTimestamp == nil && !vmi.Status.Phase.IsFinal()
	switch verb {
	case Start:
		return decideStart(vm.Name, strategy, vmi, running, paused)
	case Stop:
		return decideStop(vm.Name, strategy, vmi, running)
	case Restart:
		return decideRestart(vm.Name, strategy, vmi)
	}
	return conflict("unknown subresource %q", verb)
}

func decideStart(name string, strategy v1.VirtualMachineRunStrategy, vmi *v1.VirtualMachineInstance, running, paused bool) Decision {
	start := v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest}
	if paused {
		start.Data = map[string]string{v1.StartRequestDataPausedKey: "true"}
	}
	switch {
	case strategy == v1.RunStrategyHalted && paused:
		// As in KubeVirt: the request carries the pause, and the controller sets the run
		// strategy to Always as it starts the instance; one write, nothing to lose between two.
		return Decision{Requests: []v1.VirtualMachineStateChangeRequest{start}}
	case strategy == v1.RunStrategyHalted:
		return Decision{RunStrategy: v1.RunStrategyAlways}
	case strategy == v1.RunStrategyAlways, strategy == v1.RunStrategyOnce:
		return conflict("VM %s has runStrategy %s: the controller starts it by itself", name, strategy)
	}
	// Manual and RerunOnFailure start by request.
	if running {
		return conflict("VM %s is already running", name)
	}
	if vmi != nil && vmi.DeletionTimestamp != nil {
		return conflict("VM %s is still stopping; start it once its instance is gone", name)
	}
	return Decision{Requests: []v1.VirtualMachineStateChangeRequest{start}}
}

func decideStop(name string, strategy v1.VirtualMachineRunStrategy, vmi *v1.VirtualMachineInstance, running bool) Decision {
	switch strategy {
	case v1.RunStrategyHalted:
		return conflict("VM %s is not running: its runStrategy is already Halted", name)
	case v1.RunStrategyAlways, v1.RunStrategyOnce:
		return Decision{RunStrategy: v1.RunStrategyHalted}
	}
	if vmi == nil || vmi.DeletionTimestamp != nil {
		return conflict("VM %s is not running", name)
	}
	uid := vmi.UID
	return Decision{Requests: []v1.VirtualMachineStateChangeRequest{{Action: v1.StopRequest, UID: &uid}}}
}

func decideRestart(name string, strategy v1.VirtualMachineRunStrategy, vmi *v1.VirtualMachineInstance) Decision {
	switch strategy {
	case v1.RunStrategyHalted:
		return conflict("VM %s is not running: its runStrategy is Halted; use start", name)
	case v1.RunStrategyOnce:
		return conflict("VM %s has runStrategy Once: it is never restarted", name)
	}
	if vmi == nil || vmi.DeletionTimestamp != nil {
		return conflict("VM %s is not running", name)
	}
	uid := vmi.UID
	return Decision{Requests: []v1.VirtualMachineStateChangeRequest{
		{Action: v1.StopRequest, UID: &uid},
		{Action: v1.StartRequest},
	}}
}

// isStopMarker: the controller keeps a lone Stop whose instance is gone as a marker, so that
// RerunOnFailure and Once do not start the VM again on their own (controller/vm/decide.go).
// It is done, not pending; the next request replaces it.
func isStopMarker(reqs []v1.VirtualMachineStateChangeRequest, vmi *v1.VirtualMachineInstance) bool {
	r := reqs[0]
	return len(reqs) == 1 && r.Action == v1.StopRequest && (vmi == nil || (r.UID != nil && *r.UID != vmi.UID))
}

func conflict(format string, args ...any) Decision {
	return Decision{Conflict: fmt.Sprintf(format, args...)}
}

// ApplySpec writes a spec decision into vm, keeping the form (running or runStrategy) the user
// chose.
func (d Decision) ApplySpec(vm *v1.VirtualMachine) {
	if d.RunStrategy != "" {
		vm.Spec.SetRunStrategy(d.RunStrategy)
	}
}

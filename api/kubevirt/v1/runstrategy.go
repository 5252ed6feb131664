package v1

import "fmt"

// ErrRunningAndRunStrategy is returned when a spec sets both spec.running and spec.runStrategy.
var ErrRunningAndRunStrategy = fmt.Errorf("spec.running and spec.runStrategy are mutually exclusive")

// EffectiveRunStrategy is the run strategy a VirtualMachineSpec asks for: spec.runStrategy,
// or spec.running translated (true is Always, false or unset Halted).
func (s *VirtualMachineSpec) EffectiveRunStrategy() (VirtualMachineRunStrategy, error) {
	switch {
	case s.Running != nil && s.RunStrategy != nil:
		return "", ErrRunningAndRunStrategy
	case s.RunStrategy != nil:
		return *s.RunStrategy, nil
	case s.Running != nil && *s.Running:
		return RunStrategyAlways, nil
	default:
		return RunStrategyHalted, nil
	}
}

// SetRunStrategy sets the run strategy in the form the spec already uses: a spec with
// spec.running must not get spec.runStrategy too (the CRD forbids both), so running becomes
// whether strategy is Always.
func (s *VirtualMachineSpec) SetRunStrategy(strategy VirtualMachineRunStrategy) {
	if s.Running != nil {
		running := strategy == RunStrategyAlways
		s.Running = &running
		return
	}
	s.RunStrategy = &strategy
}

// StartRequestDataPausedKey, with the value "true", in a Start request's data asks for the
// instance to start paused (virtctl start --paused), as in KubeVirt.
const StartRequestDataPausedKey = "paused"

// StartsPaused says whether the request is a Start asking for a paused start.
func (r VirtualMachineStateChangeRequest) StartsPaused() bool {
	return r.Action == StartRequest && r.Data[StartRequestDataPausedKey] == "true"
}

// IsFinal reports whether an instance in this phase will never run again.
func (p VirtualMachineInstancePhase) IsFinal() bool {
	return p == Succeeded || p == Failed
}

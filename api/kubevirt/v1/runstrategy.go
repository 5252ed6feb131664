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

// IsFinal reports whether an instance in this phase will never run again.
func (p VirtualMachineInstancePhase) IsFinal() bool {
	return p == Succeeded || p == Failed
}

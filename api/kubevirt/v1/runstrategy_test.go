package v1

import (
	"errors"
	"testing"

	"k8s.io/utils/ptr"
)

func TestEffectiveRunStrategy(t *testing.T) {
	tests := []struct {
		name        string
		running     *bool
		runStrategy *VirtualMachineRunStrategy
		want        VirtualMachineRunStrategy
		wantErr     error
	}{
		{name: "nothing set is Halted", want: RunStrategyHalted},
		{name: "running true is Always", running: ptr.To(true), want: RunStrategyAlways},
		{name: "running false is Halted", running: ptr.To(false), want: RunStrategyHalted},
		{name: "runStrategy is taken as is", runStrategy: ptr.To(RunStrategyManual), want: RunStrategyManual},
		{name: "both set is an error", running: ptr.To(true), runStrategy: ptr.To(RunStrategyOnce), wantErr: ErrRunningAndRunStrategy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := VirtualMachineSpec{Running: tt.running, RunStrategy: tt.runStrategy}
			got, err := spec.EffectiveRunStrategy()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("run strategy = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPhaseIsFinal(t *testing.T) {
	final := map[VirtualMachineInstancePhase]bool{
		VmPhaseUnset: false, Pending: false, Scheduling: false, Scheduled: false,
		Running: false, Unknown: false, Succeeded: true, Failed: true,
	}
	for phase, want := range final {
		if got := phase.IsFinal(); got != want {
			t.Errorf("%q.IsFinal() = %v, want %v", phase, got, want)
		}
	}
}

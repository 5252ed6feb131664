package controller

import (
	"context"
	"fmt"
	"testing"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestAPausedStartOfAHaltedVM: a Start request asking for a paused start (virtctl start
// --paused) makes a halted VM Always, and its instance is created to start paused.
func TestAPausedStartOfAHaltedVM(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	vm := createVM(t, ns, "paused", v1.RunStrategyHalted)
	eventually(t, timeout, "the VM to be Stopped", vmStatus(ns, vm.Name, v1.VirtualMachineStatusStopped))
	requestStateChange(t, ns, vm.Name, v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest,
		Data: map[string]string{v1.StartRequestDataPausedKey: "true"}})
	eventually(t, timeout, "a paused instance", func(ctx context.Context) (bool, error) {
		vmi, err := getVMI(ctx, ns, vm.Name)
		if err != nil {
			return false, err
		}
		if s := vmi.Spec.StartStrategy; s == nil || *s != v1.StartStrategyPaused {
			return false, fmt.Errorf("startStrategy %v", s)
		}
		return true, nil
	})
	// The request is consumed by the status write that follows the instance's creation.
	eventually(t, timeout, "the request consumed", requestsConsumed(ns, vm.Name))
	if s, _ := getVM(t, ns, vm.Name).Spec.EffectiveRunStrategy(); s != v1.RunStrategyAlways {
		t.Errorf("VM runs %s, want Always", s)
	}
}

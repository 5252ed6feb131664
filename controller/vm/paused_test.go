package vm

import (
	"context"
	"testing"

	k8sv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// TestPausedMirrorsTheInstance: a VM whose instance is paused shows Paused, with the
// instance's Paused condition; unpaused, it is Running again and the condition is gone.
func TestPausedMirrorsTheInstance(t *testing.T) {
	for _, tc := range []struct {
		name       string
		conditions []v1.VirtualMachineInstanceCondition
		want       v1.VirtualMachinePrintableStatus
		paused     bool
	}{
		{"paused by the user", []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: k8sv1.ConditionTrue,
			Reason: "PausedByUser", Message: "VMI was paused by user"}}, v1.VirtualMachineStatusPaused, true},
		{"Paused False", []v1.VirtualMachineInstanceCondition{{Type: v1.VirtualMachineInstancePaused, Status: k8sv1.ConditionFalse}},
			v1.VirtualMachineStatusRunning, false},
		{"running", nil, v1.VirtualMachineStatusRunning, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := newVM(v1.RunStrategyAlways)
			vm.Status.Conditions = []v1.VirtualMachineCondition{{Type: v1.VirtualMachinePaused, Status: k8sv1.ConditionTrue}} // from an earlier pause
			vmi := ownedInstance(vm, v1.Running)
			vmi.Status.Conditions = tc.conditions
			f := newFixture(t, []*v1.VirtualMachine{vm}, []*v1.VirtualMachineInstance{vmi})
			f.sync("ns/vm")
			stored, err := f.client.KubevirtV1().VirtualMachines("ns").Get(context.Background(), "vm", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if stored.Status.PrintableStatus != tc.want {
				t.Errorf("printable status %s, want %s", stored.Status.PrintableStatus, tc.want)
			}
			var got *v1.VirtualMachineCondition
			for i := range stored.Status.Conditions {
				if stored.Status.Conditions[i].Type == v1.VirtualMachinePaused {
					got = &stored.Status.Conditions[i]
				}
			}
			if tc.paused != (got != nil) || got != nil && (got.Reason != "PausedByUser" || got.Message == "") {
				t.Errorf("Paused condition %+v, want present: %v", got, tc.paused)
			}
		})
	}
}

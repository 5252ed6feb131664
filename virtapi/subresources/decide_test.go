package subresources

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

func vmWith(strategy v1.VirtualMachineRunStrategy, pending ...v1.StateChangeRequestAction) *v1.VirtualMachine {
	vm := &v1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Name: "vm"}, Spec: v1.VirtualMachineSpec{RunStrategy: ptr.To(strategy)}}
	for _, a := range pending {
		vm.Status.StateChangeRequests = append(vm.Status.StateChangeRequests, v1.VirtualMachineStateChangeRequest{Action: a})
	}
	return vm
}

func vmiIn(phase v1.VirtualMachineInstancePhase, deleting bool) *v1.VirtualMachineInstance {
	vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", UID: "uid-1"}}
	vmi.Status.Phase = phase
	if deleting {
		vmi.DeletionTimestamp = &metav1.Time{}
	}
	return vmi
}

var (
	uid1           = types.UID("uid-1")
	startReq       = v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest}
	pausedStartReq = v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest, Data: map[string]string{v1.StartRequestDataPausedKey: "true"}}
	stopReq        = v1.VirtualMachineStateChangeRequest{Action: v1.StopRequest, UID: &uid1}
	running        = vmiIn(v1.Running, false)
	stopping       = vmiIn(v1.Running, true)
	succeeded      = vmiIn(v1.Succeeded, false)
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verb     Verb
		vm       *v1.VirtualMachine
		vmi      *v1.VirtualMachineInstance
		conflict string // substring of the 409 reason
		strategy v1.VirtualMachineRunStrategy
		requests []v1.VirtualMachineStateChangeRequest
		paused   bool
	}{
		{name: "start Halted", verb: Start, vm: vmWith(v1.RunStrategyHalted), strategy: v1.RunStrategyAlways},
		{name: "start Halted paused: the request carries it", verb: Start, vm: vmWith(v1.RunStrategyHalted), paused: true, requests: []v1.VirtualMachineStateChangeRequest{pausedStartReq}},
		{name: "start Manual paused", verb: Start, vm: vmWith(v1.RunStrategyManual), paused: true, requests: []v1.VirtualMachineStateChangeRequest{pausedStartReq}},
		{name: "start Always paused", verb: Start, vm: vmWith(v1.RunStrategyAlways), paused: true, conflict: "starts it by itself"},
		{name: "start Always", verb: Start, vm: vmWith(v1.RunStrategyAlways), vmi: running, conflict: "starts it by itself"},
		{name: "start Once", verb: Start, vm: vmWith(v1.RunStrategyOnce), conflict: "starts it by itself"},
		{name: "start Manual stopped", verb: Start, vm: vmWith(v1.RunStrategyManual), requests: []v1.VirtualMachineStateChangeRequest{startReq}},
		{name: "start Manual after guest shutdown", verb: Start, vm: vmWith(v1.RunStrategyManual), vmi: succeeded, requests: []v1.VirtualMachineStateChangeRequest{startReq}},
		{name: "start Manual running", verb: Start, vm: vmWith(v1.RunStrategyManual), vmi: running, conflict: "already running"},
		{name: "start Manual stopping", verb: Start, vm: vmWith(v1.RunStrategyManual), vmi: stopping, conflict: "still stopping"},
		{name: "start RerunOnFailure stopped", verb: Start, vm: vmWith(v1.RunStrategyRerunOnFailure), requests: []v1.VirtualMachineStateChangeRequest{startReq}},
		{name: "start RerunOnFailure running", verb: Start, vm: vmWith(v1.RunStrategyRerunOnFailure), vmi: running, conflict: "already running"},
		{name: "start RerunOnFailure after stop replaces the stop marker", verb: Start, vm: vmWith(v1.RunStrategyRerunOnFailure, v1.StopRequest), requests: []v1.VirtualMachineStateChangeRequest{startReq}},
		{name: "start Manual while the stop is pending", verb: Start, vm: func() *v1.VirtualMachine {
			vm := vmWith(v1.RunStrategyManual)
			vm.Status.StateChangeRequests = []v1.VirtualMachineStateChangeRequest{stopReq}
			return vm
		}(), vmi: stopping, conflict: "Stop request pending"},
		{name: "start with pending request", verb: Start, vm: vmWith(v1.RunStrategyManual, v1.StartRequest), conflict: "Start request pending"},

		{name: "stop Always", verb: Stop, vm: vmWith(v1.RunStrategyAlways), vmi: running, strategy: v1.RunStrategyHalted},
		{name: "stop Always without instance", verb: Stop, vm: vmWith(v1.RunStrategyAlways), strategy: v1.RunStrategyHalted},
		{name: "stop Once", verb: Stop, vm: vmWith(v1.RunStrategyOnce), vmi: running, strategy: v1.RunStrategyHalted},
		{name: "stop Halted", verb: Stop, vm: vmWith(v1.RunStrategyHalted), conflict: "already Halted"},
		{name: "stop Manual running", verb: Stop, vm: vmWith(v1.RunStrategyManual), vmi: running, requests: []v1.VirtualMachineStateChangeRequest{stopReq}},
		{name: "stop Manual stopped", verb: Stop, vm: vmWith(v1.RunStrategyManual), conflict: "not running"},
		{name: "stop RerunOnFailure running", verb: Stop, vm: vmWith(v1.RunStrategyRerunOnFailure), vmi: running, requests: []v1.VirtualMachineStateChangeRequest{stopReq}},
		{name: "stop RerunOnFailure stopping", verb: Stop, vm: vmWith(v1.RunStrategyRerunOnFailure), vmi: stopping, conflict: "not running"},
		{name: "stop with pending request", verb: Stop, vm: vmWith(v1.RunStrategyManual, v1.StopRequest), vmi: running, conflict: "Stop request pending"},

		{name: "restart Always", verb: Restart, vm: vmWith(v1.RunStrategyAlways), vmi: running, requests: []v1.VirtualMachineStateChangeRequest{stopReq, startReq}},
		{name: "restart Manual", verb: Restart, vm: vmWith(v1.RunStrategyManual), vmi: running, requests: []v1.VirtualMachineStateChangeRequest{stopReq, startReq}},
		{name: "restart RerunOnFailure", verb: Restart, vm: vmWith(v1.RunStrategyRerunOnFailure), vmi: running, requests: []v1.VirtualMachineStateChangeRequest{stopReq, startReq}},
		{name: "restart Halted", verb: Restart, vm: vmWith(v1.RunStrategyHalted), conflict: "Halted"},
		{name: "restart Once", verb: Restart, vm: vmWith(v1.RunStrategyOnce), vmi: running, conflict: "never restarted"},
		{name: "restart without instance", verb: Restart, vm: vmWith(v1.RunStrategyManual), conflict: "not running"},
		{name: "restart while one is pending", verb: Restart, vm: vmWith(v1.RunStrategyAlways, v1.StopRequest, v1.StartRequest), vmi: stopping, conflict: "pending"},

		{name: "deleted VM", verb: Start, vm: func() *v1.VirtualMachine {
			vm := vmWith(v1.RunStrategyHalted)
			vm.DeletionTimestamp = &metav1.Time{}
			return vm
		}(), conflict: "being deleted"},
		{name: "running and runStrategy", verb: Start, vm: func() *v1.VirtualMachine {
			vm := vmWith(v1.RunStrategyHalted)
			vm.Spec.Running = ptr.To(false)
			return vm
		}(), conflict: "mutually exclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.verb, tc.vm, tc.vmi, tc.paused)
			if tc.conflict != "" {
				if !strings.Contains(d.Conflict, tc.conflict) {
					t.Fatalf("conflict %q, want one containing %q (decision %+v)", d.Conflict, tc.conflict, d)
				}
				return
			}
			if d.Conflict != "" || d.RunStrategy != tc.strategy || !sameRequests(d.Requests, tc.requests) {
				t.Fatalf("got %+v, want strategy %q requests %+v", d, tc.strategy, tc.requests)
			}
		})
	}
}

func sameRequests(a, b []v1.VirtualMachineStateChangeRequest) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Action != b[i].Action || (a[i].UID == nil) != (b[i].UID == nil) || (a[i].UID != nil && *a[i].UID != *b[i].UID) ||
			a[i].StartsPaused() != b[i].StartsPaused() {
			return false
		}
	}
	return true
}

func TestApplySpecKeepsTheUsersForm(t *testing.T) {
	vm := &v1.VirtualMachine{Spec: v1.VirtualMachineSpec{Running: ptr.To(false)}}
	Decision{RunStrategy: v1.RunStrategyAlways}.ApplySpec(vm)
	if vm.Spec.RunStrategy != nil || !*vm.Spec.Running {
		t.Fatalf("running form: %+v", vm.Spec)
	}
	vm = vmWith(v1.RunStrategyAlways)
	Decision{RunStrategy: v1.RunStrategyHalted}.ApplySpec(vm)
	if vm.Spec.Running != nil || *vm.Spec.RunStrategy != v1.RunStrategyHalted {
		t.Fatalf("runStrategy form: %+v", vm.Spec)
	}
}

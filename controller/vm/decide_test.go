package vm

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

const currentUID = types.UID("vmi-1")

func instance(phase v1.VirtualMachineInstancePhase) *v1.VirtualMachineInstance {
	return &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "vm", UID: currentUID}, Status: v1.VirtualMachineInstanceStatus{Phase: phase}}
}

func stop(uid types.UID) v1.VirtualMachineStateChangeRequest {
	return v1.VirtualMachineStateChangeRequest{Action: v1.StopRequest, UID: ptr.To(uid)}
}

var start = v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest}

// event is one thing that happens to a VirtualMachine in the run-strategy matrix.
type event struct {
	name     string
	vmi      *v1.VirtualMachineInstance
	requests []v1.VirtualMachineStateChangeRequest
}

var (
	guestShutdown  = event{name: "guest shut down", vmi: instance(v1.Succeeded)}
	crash          = event{name: "crash", vmi: instance(v1.Failed)}
	externalDelete = event{name: "instance deleted externally"}
	startRequest   = event{name: "start request while stopped", requests: []v1.VirtualMachineStateChangeRequest{stop("old"), start}}
	stopRequest    = event{name: "stop request while running", vmi: instance(v1.Running), requests: []v1.VirtualMachineStateChangeRequest{stop(currentUID)}}
	afterStop      = event{name: "after a stop request took effect", requests: []v1.VirtualMachineStateChangeRequest{stop(currentUID)}}
	restartRequest = event{name: "restart request while running", vmi: instance(v1.Running), requests: []v1.VirtualMachineStateChangeRequest{stop(currentUID), start}}
	restartGone    = event{name: "restart request after the old instance is gone", requests: []v1.VirtualMachineStateChangeRequest{stop(currentUID), start}}
)

type outcome string

const (
	create outcome = "create"
	del    outcome = "delete"
	noop   outcome = "no-op"
)

func TestRunStrategyMatrix(t *testing.T) {
	matrix := map[v1.VirtualMachineRunStrategy]map[*event]outcome{
		v1.RunStrategyAlways: {
			&guestShutdown: del, &crash: del, &externalDelete: create,
			&startRequest: create, &stopRequest: del, &afterStop: create, &restartRequest: del, &restartGone: create,
		},
		v1.RunStrategyRerunOnFailure: {
			&guestShutdown: noop, &crash: del, &externalDelete: create,
			&startRequest: create, &stopRequest: del, &afterStop: noop, &restartRequest: del, &restartGone: create,
		},
		v1.RunStrategyManual: {
			&guestShutdown: noop, &crash: noop, &externalDelete: noop,
			&startRequest: create, &stopRequest: del, &afterStop: noop, &restartRequest: del, &restartGone: create,
		},
		v1.RunStrategyHalted: {
			&guestShutdown: del, &crash: del, &externalDelete: noop,
			&startRequest: noop, &stopRequest: del, &afterStop: noop, &restartRequest: del, &restartGone: noop,
		},
		v1.RunStrategyOnce: {
			&guestShutdown: noop, &crash: noop, &externalDelete: create,
			&startRequest: create, &stopRequest: del, &afterStop: noop, &restartRequest: del, &restartGone: create,
		},
	}
	for strategy, rows := range matrix {
		for ev, want := range rows {
			t.Run(fmt.Sprintf("%s/%s", strategy, ev.name), func(t *testing.T) {
				vm := &v1.VirtualMachine{Status: v1.VirtualMachineStatus{StateChangeRequests: ev.requests}}
				if got := outcomeOf(decide(vm, ev.vmi, strategy, time.Now())); got != want {
					t.Errorf("got %s, want %s", got, want)
				}
			})
		}
	}
}

func outcomeOf(p plan) outcome {
	switch {
	case p.createVMI && p.deleteVMI:
		return "create and delete"
	case p.createVMI:
		return create
	case p.deleteVMI:
		return del
	}
	return noop
}

func TestFencing(t *testing.T) {
	terminating := instance(v1.Succeeded)
	terminating.DeletionTimestamp = ptr.To(metav1.Now())
	for _, strategy := range []v1.VirtualMachineRunStrategy{v1.RunStrategyAlways, v1.RunStrategyRerunOnFailure, v1.RunStrategyOnce, v1.RunStrategyManual, v1.RunStrategyHalted} {
		vm := &v1.VirtualMachine{Status: v1.VirtualMachineStatus{StateChangeRequests: []v1.VirtualMachineStateChangeRequest{start}}}
		if p := decide(vm, terminating, strategy, time.Now()); p.createVMI || p.deleteVMI {
			t.Errorf("%s: with an instance still terminating got %s, want no-op", strategy, outcomeOf(p))
		}
	}
}

func TestRequestQueue(t *testing.T) {
	tests := []struct {
		name string
		ev   event
		want []v1.VirtualMachineStateChangeRequest
	}{
		{"stop waits for its instance", stopRequest, []v1.VirtualMachineStateChangeRequest{stop(currentUID)}},
		{"start is consumed by the creation", startRequest, []v1.VirtualMachineStateChangeRequest{}},
		{"restart keeps both until the instance is gone", restartRequest, []v1.VirtualMachineStateChangeRequest{stop(currentUID), start}},
		{"start on a running instance is dropped", event{vmi: instance(v1.Running), requests: []v1.VirtualMachineStateChangeRequest{start}}, []v1.VirtualMachineStateChangeRequest{}},
		{"stop for an older instance is dropped", event{vmi: instance(v1.Running), requests: []v1.VirtualMachineStateChangeRequest{stop("old")}}, []v1.VirtualMachineStateChangeRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := &v1.VirtualMachine{Status: v1.VirtualMachineStatus{StateChangeRequests: tt.ev.requests}}
			got := decide(vm, tt.ev.vmi, v1.RunStrategyManual, time.Now()).requests
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("queue (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCrashLoopBackoffHoldsAutomaticStarts(t *testing.T) {
	now := time.Now()
	retry := metav1.NewTime(now.Add(40 * time.Second))
	vm := &v1.VirtualMachine{Status: v1.VirtualMachineStatus{StartFailure: &v1.VirtualMachineStartFailure{ConsecutiveFailCount: 2, RetryAfterTimestamp: &retry}}}
	p := decide(vm, nil, v1.RunStrategyAlways, now)
	if p.createVMI || p.backoff != 40*time.Second {
		t.Errorf("during backoff: create=%v backoff=%s, want no create and 40s", p.createVMI, p.backoff)
	}
	if p := decide(vm, nil, v1.RunStrategyAlways, now.Add(41*time.Second)); !p.createVMI {
		t.Error("after backoff: no create")
	}
	vm.Status.StateChangeRequests = []v1.VirtualMachineStateChangeRequest{start}
	if p := decide(vm, nil, v1.RunStrategyManual, now); !p.createVMI {
		t.Error("an explicit start request must not wait for the backoff")
	}
}

// TestPausedStart: virtctl start --paused is a Start request asking for a paused instance. A
// halted VM is first made Always (the request kept); the start then consumes the request.
func TestPausedStart(t *testing.T) {
	paused := v1.VirtualMachineStateChangeRequest{Action: v1.StartRequest, Data: map[string]string{v1.StartRequestDataPausedKey: "true"}}
	stopping := instance(v1.Running)
	stopping.DeletionTimestamp = ptr.To(metav1.Now())
	tests := []struct {
		name     string
		strategy v1.VirtualMachineRunStrategy
		vmi      *v1.VirtualMachineInstance
		want     plan
	}{
		{"halted: made Always first", v1.RunStrategyHalted, nil, plan{runStrategy: v1.RunStrategyAlways, requests: []v1.VirtualMachineStateChangeRequest{paused}}},
		{"halted, old instance still stopping: wait", v1.RunStrategyHalted, stopping, plan{requests: []v1.VirtualMachineStateChangeRequest{paused}}},
		{"Always: started paused", v1.RunStrategyAlways, nil, plan{createVMI: true, startPaused: true}},
		{"Manual: started paused", v1.RunStrategyManual, nil, plan{createVMI: true, startPaused: true}},
		{"already running: dropped", v1.RunStrategyManual, instance(v1.Running), plan{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := &v1.VirtualMachine{Status: v1.VirtualMachineStatus{StateChangeRequests: []v1.VirtualMachineStateChangeRequest{paused}}}
			got := decide(vm, tt.vmi, tt.strategy, time.Now())
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(plan{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

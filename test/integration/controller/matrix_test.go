package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// quiet is how long "nothing new happens" is watched for.
const quiet = 2 * time.Second

// strategy is a way of writing a VirtualMachine's run strategy.
type strategy struct {
	name string
	set  func(*v1.VirtualMachineSpec)
	// manual: the controller does not start the VM on its own; the setup sends a Start request.
	manual bool
}

func runStrategy(s v1.VirtualMachineRunStrategy) strategy {
	return strategy{name: string(s), set: func(spec *v1.VirtualMachineSpec) { spec.RunStrategy = ptr.To(s) },
		manual: s == v1.RunStrategyManual}
}

func running(b bool) strategy {
	return strategy{name: fmt.Sprintf("running=%v", b), set: func(spec *v1.VirtualMachineSpec) { spec.Running = ptr.To(b) }}
}

var (
	always         = runStrategy(v1.RunStrategyAlways)
	rerunOnFailure = runStrategy(v1.RunStrategyRerunOnFailure)
	once           = runStrategy(v1.RunStrategyOnce)
	manual         = runStrategy(v1.RunStrategyManual)
	halted         = runStrategy(v1.RunStrategyHalted)
	runningTrue    = running(true)
	runningFalse   = running(false)
)

// event is what happens to the VM (and its instance, nil when it has none) in one row.
type event struct {
	name string
	do   func(t *testing.T, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance)
}

var (
	guestShutdown = event{"guest shutdown", func(t *testing.T, vm *v1.VirtualMachine, _ *v1.VirtualMachineInstance) {
		must(t, node.Shutdown(t.Context(), vm.Namespace, vm.Name))
	}}
	guestCrash = event{"crash", func(t *testing.T, vm *v1.VirtualMachine, _ *v1.VirtualMachineInstance) {
		must(t, node.Crash(t.Context(), vm.Namespace, vm.Name))
	}}
	externalDelete = event{"external VMI delete", func(t *testing.T, _ *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) {
		deleteVMI(t, vmi)
	}}
	start = event{"start request", func(t *testing.T, vm *v1.VirtualMachine, _ *v1.VirtualMachineInstance) {
		requestStateChange(t, vm.Namespace, vm.Name, startRequest)
	}}
	stop = event{"stop request", func(t *testing.T, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) {
		requestStateChange(t, vm.Namespace, vm.Name, stopRequest(uidOf(vmi)))
	}}
	restart = event{"restart request", func(t *testing.T, vm *v1.VirtualMachine, vmi *v1.VirtualMachineInstance) {
		requestStateChange(t, vm.Namespace, vm.Name, stopRequest(uidOf(vmi)), startRequest)
	}}
)

// setup is the state the VM is brought to before the event.
type setup string

const (
	isRunning   setup = "running"   // its instance runs (Manual: started by a Start request)
	neverRan    setup = "never ran" // no instance was ever created (Manual, Halted)
	wasShutDown setup = "shut down" // the guest shut down; the Succeeded instance is kept
)

// outcome is what the row expects after the event.
type outcome string

const (
	newInstance outcome = "new VMI running"          // a new instance (new UID) runs
	keptRunning outcome = "same VMI keeps running"   // no new instance; the request is consumed
	keptFinal   outcome = "finished VMI kept"        // the Succeeded/Failed instance stays, no new one
	noInstance  outcome = "no VMI"                   // the instance is deleted and none is created
	ignored     outcome = "no VMI, requests dropped" // Halted: nothing starts; the queue is emptied
)

// TestRunStrategyMatrix drives each run strategy through each event end to end, against the
// expectations of controller/vm/decide.go and the behaviour contract. Halted VMs never have an
// instance, so only requests apply to them.
func TestRunStrategyMatrix(t *testing.T) {
	rows := []struct {
		strategy strategy
		setup    setup
		event    event
		want     outcome
	}{
		{always, isRunning, guestShutdown, newInstance},
		{always, isRunning, guestCrash, newInstance},
		{always, isRunning, externalDelete, newInstance},
		{always, isRunning, start, keptRunning},
		{always, isRunning, stop, newInstance}, // a raw Stop does not halt Always (virtctl stop sets Halted)
		{always, isRunning, restart, newInstance},

		{runningTrue, isRunning, guestShutdown, newInstance},
		{runningTrue, isRunning, guestCrash, newInstance},
		{runningTrue, isRunning, externalDelete, newInstance},
		{runningTrue, isRunning, start, keptRunning},
		{runningTrue, isRunning, stop, newInstance},
		{runningTrue, isRunning, restart, newInstance},

		{rerunOnFailure, isRunning, guestShutdown, keptFinal},
		{rerunOnFailure, isRunning, guestCrash, newInstance},
		{rerunOnFailure, isRunning, externalDelete, newInstance},
		{rerunOnFailure, wasShutDown, start, newInstance},
		{rerunOnFailure, wasShutDown, externalDelete, newInstance}, // no instance and no Stop: it starts
		{rerunOnFailure, isRunning, stop, noInstance},
		{rerunOnFailure, isRunning, restart, newInstance},

		{once, isRunning, guestShutdown, keptFinal},
		{once, isRunning, guestCrash, keptFinal},
		{once, isRunning, externalDelete, newInstance},   // "created if none exists"
		{once, wasShutDown, start, newInstance},          // the subresource refuses it (409); the controller acts
		{once, wasShutDown, externalDelete, newInstance}, // likewise: Once means "while none exists"
		{once, isRunning, stop, noInstance},
		{once, isRunning, restart, newInstance}, // likewise refused by the subresource

		{manual, isRunning, guestShutdown, keptFinal},
		{manual, isRunning, guestCrash, keptFinal},
		{manual, isRunning, externalDelete, noInstance},
		{manual, neverRan, start, newInstance},
		{manual, wasShutDown, externalDelete, noInstance},
		{manual, isRunning, stop, noInstance},
		{manual, isRunning, restart, newInstance},

		{halted, neverRan, start, ignored},
		{halted, neverRan, stop, ignored},
		{halted, neverRan, restart, ignored},

		{runningFalse, neverRan, start, ignored},
		{runningFalse, neverRan, stop, ignored},
		{runningFalse, neverRan, restart, ignored},
	}
	for _, row := range rows {
		t.Run(fmt.Sprintf("%s/%s/%s", row.strategy.name, row.setup, row.event.name), func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			created := recordVMIs(t, ns)
			vm := newVM(ns, "vm")
			row.strategy.set(&vm.Spec)
			vm = createVMObject(t, vm)

			before := bringTo(t, vm, row.strategy, row.setup)
			row.event.do(t, vm, before)
			expect(t, vm, before, row.want)

			wantCreated := 0 // the instances the setup and the event started
			if before != nil {
				wantCreated++
			}
			if row.want == newInstance {
				wantCreated++
			}
			created.expect(t, vm.Name, wantCreated)
		})
	}
}

// bringTo brings vm to the setup state and returns its instance then (nil when none).
func bringTo(t *testing.T, vm *v1.VirtualMachine, s strategy, state setup) *v1.VirtualMachineInstance {
	t.Helper()
	if state == neverRan {
		consistently(t, time.Second, "the VM not to start on its own", vmiGone(vm.Namespace, vm.Name))
		return nil
	}
	if s.manual {
		requestStateChange(t, vm.Namespace, vm.Name, startRequest)
	}
	vmi := waitRunning(t, vm)
	if state == wasShutDown {
		must(t, node.Shutdown(t.Context(), vm.Namespace, vm.Name))
		eventually(t, timeout, "the VM Stopped after the guest shut down", vmStatus(vm.Namespace, vm.Name, v1.VirtualMachineStatusStopped))
		vmi.Status.Phase = v1.Succeeded
	}
	return vmi
}

// expect checks the row's outcome, given the instance from before the event.
func expect(t *testing.T, vm *v1.VirtualMachine, before *v1.VirtualMachineInstance, want outcome) {
	t.Helper()
	ns, name := vm.Namespace, vm.Name
	switch want {
	case newInstance:
		waitRunningNot(t, vm, uidOf(before))
		eventually(t, timeout, "the request queue to be consumed", requestsDropped(ns, name))
		if before != nil {
			eventually(t, timeout, "the old instance's launcher pod to go", noLauncherPods(ns, before.UID))
		}
	case keptRunning:
		eventually(t, timeout, "the request queue to be consumed", requestsDropped(ns, name))
		consistently(t, quiet, "the same instance to keep running", sameVMI(ns, name, before.UID, v1.Running))
		eventually(t, timeout, "the VM Running", vmStatus(ns, name, v1.VirtualMachineStatusRunning))
	case keptFinal:
		eventually(t, timeout, "the VM Stopped", vmStatus(ns, name, v1.VirtualMachineStatusStopped))
		final, err := getVMI(t.Context(), ns, name)
		must(t, err)
		if final.UID != before.UID || !final.Status.Phase.IsFinal() {
			t.Fatalf("instance %s is %s, want %s kept in a final phase", final.UID, final.Status.Phase, before.UID)
		}
		consistently(t, quiet, "the finished instance to stay, with no new one", sameVMI(ns, name, before.UID, final.Status.Phase))
	case noInstance, ignored:
		eventually(t, timeout, "no instance", vmiGone(ns, name))
		eventually(t, timeout, "the VM Stopped", vmStatus(ns, name, v1.VirtualMachineStatusStopped))
		if want == ignored {
			eventually(t, timeout, "the request queue to be emptied", requestsDropped(ns, name))
		}
		consistently(t, quiet, "no instance to be created", vmiGone(ns, name))
	default:
		t.Fatalf("unknown outcome %q", want)
	}
}

// requestsDropped is a condition for eventually: the VM's request queue is empty.
func requestsDropped(ns, name string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		vm, err := virt.KubevirtV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if n := len(vm.Status.StateChangeRequests); n > 0 {
			var actions []string
			for _, r := range vm.Status.StateChangeRequests {
				actions = append(actions, string(r.Action))
			}
			return false, fmt.Errorf("queue [%s]", strings.Join(actions, ", "))
		}
		return true, nil
	}
}

func uidOf(vmi *v1.VirtualMachineInstance) types.UID {
	if vmi == nil {
		return ""
	}
	return vmi.UID
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

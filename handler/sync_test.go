package handler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

const domName = "ns_web"

// withOverlay puts the overlay the containerDisk's holder sidecar would have written.
func (f *fixture) withOverlay() *fixture {
	f.t.Helper()
	path := f.private(diskRel("root", layout.Qcow2DiskFile))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("QFI\xfb"), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return f
}

func condition(vmi *v1.VirtualMachineInstance, t v1.VirtualMachineInstanceConditionType) *v1.VirtualMachineInstanceCondition {
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == t {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}

func TestSyncDefinesAndStartsOnce(t *testing.T) {
	vmi := newInstance()
	vmi.ResourceVersion = "1" // the version the status write replaces (fakes set none)
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()

	if got, want := f.sync(), []string{"patch virtualmachineinstances"}; !slices.Equal(got, want) {
		t.Fatalf("writes = %v, want %v", got, want)
	}
	if d, s := f.lv.counts(); d != 1 || s != 1 {
		t.Fatalf("defines, starts = %d, %d; want 1, 1", d, s)
	}
	xml := f.lv.domains[domName].xml
	for _, want := range []string{`type="qemu"`, "/var/run/kubevirt-private/vmi-disks/root/disk.qcow2", `type="qcow2"`, `dev="tap0"`, "/var/run/kubevirt-private/console.log"} {
		if !strings.Contains(xml, want) {
			t.Errorf("domain XML lacks %s:\n%s", want, xml)
		}
	}
	got := f.stored()
	if got.Status.Phase != v1.Running || got.Status.NodeName != testNode {
		t.Errorf("phase %s node %q, want Running on %s", got.Status.Phase, got.Status.NodeName, testNode)
	}
	if c := condition(got, v1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
	wantIface := v1.VirtualMachineInstanceNetworkInterface{Name: "default", IP: "10.244.0.7", IPs: []string{"10.244.0.7", "fd00::7"}, MAC: "52:54:00:aa:bb:cc"}
	if len(got.Status.Interfaces) != 1 || !equalIface(got.Status.Interfaces[0], wantIface) {
		t.Errorf("interfaces = %+v, want [%+v]", got.Status.Interfaces, wantIface)
	}
	if got.Status.LauncherContainerImageVersion != "launcher:test" {
		t.Errorf("launcher image = %q", got.Status.LauncherContainerImageVersion)
	}
	// One event for the define and the start.
	if ev := f.events(); len(ev) != 1 || !strings.Contains(ev[0], ReasonStarted) || !strings.Contains(ev[0], "type qemu") {
		t.Errorf("events = %q", ev)
	}

	// The informer has not seen the write yet: nothing starts again, and nothing is written
	// from the stale copy (the write's own watch event syncs it again).
	if w := f.sync(); len(w) != 0 {
		t.Errorf("stale sync writes = %v, want none", w)
	}
	// Once it has, a sync changes nothing.
	f.observe()
	if w := f.sync(); len(w) != 0 {
		t.Errorf("writes of an unchanged status: %v", w)
	}
	if d, s := f.lv.counts(); d != 1 || s != 1 {
		t.Errorf("after resyncs: defines, starts = %d, %d; want 1, 1", d, s)
	}
	if f.dials != 1 {
		t.Errorf("dials = %d, want one cached connection", f.dials)
	}
}

func equalIface(a, b v1.VirtualMachineInstanceNetworkInterface) bool {
	return a.Name == b.Name && a.IP == b.IP && a.MAC == b.MAC && slices.Equal(a.IPs, b.IPs)
}

func TestRestartAdoptsDomain(t *testing.T) {
	for _, tc := range []struct {
		name        string
		phase       v1.VirtualMachineInstancePhase
		state       libvirt.DomainState
		reason      int32
		wantStarts  int
		wantPhase   v1.VirtualMachineInstancePhase
		wantWrites  int
		wantDefines int
	}{
		{"running domain, Scheduled instance", v1.Scheduled, libvirt.DomainRunning, 1, 0, v1.Running, 1, 0},
		{"running domain, Running instance", v1.Running, libvirt.DomainRunning, 1, 0, v1.Running, 1, 0},
		{"defined, never started", v1.Scheduled, libvirt.DomainShutoff, int32(libvirt.DomainShutoffUnknown), 1, v1.Running, 1, 0},
		{"shut down before the handler saw it run", v1.Scheduled, libvirt.DomainShutoff, int32(libvirt.DomainShutoffShutdown), 0, v1.Succeeded, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vmi := newInstance()
			vmi.Status.Phase = tc.phase
			f := newFixture(t, vmi, newPod(vmi)).withOverlay()
			f.lv.set(domName, tc.state, tc.reason)
			if w := f.sync(); len(w) != tc.wantWrites {
				t.Errorf("writes = %v", w)
			}
			if d, s := f.lv.counts(); d != tc.wantDefines || s != tc.wantStarts {
				t.Errorf("defines, starts = %d, %d; want %d, %d", d, s, tc.wantDefines, tc.wantStarts)
			}
			if got := f.stored().Status.Phase; got != tc.wantPhase {
				t.Errorf("phase = %s, want %s", got, tc.wantPhase)
			}
		})
	}
}

func TestInvalidSpecFails(t *testing.T) {
	for name, mutate := range map[string]func(*v1.VirtualMachineInstance){
		"convert error": func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Networks = nil },
		"two pod interfaces": func(vmi *v1.VirtualMachineInstance) {
			second := vmi.Spec.Domain.Devices.Interfaces[0]
			second.Name = "second"
			vmi.Spec.Domain.Devices.Interfaces = append(vmi.Spec.Domain.Devices.Interfaces, second)
		},
		"volume name": func(vmi *v1.VirtualMachineInstance) { vmi.Spec.Volumes[0].Name = "../etc" },
	} {
		t.Run(name, func(t *testing.T) {
			vmi := newInstance()
			mutate(vmi)
			f := newFixture(t, vmi, newPod(vmi)).withOverlay()
			f.sync()
			got := f.stored()
			if got.Status.Phase != v1.Failed || got.Status.Reason != ReasonInvalidSpec {
				t.Fatalf("phase, reason = %s, %q; want Failed, %s", got.Status.Phase, got.Status.Reason, ReasonInvalidSpec)
			}
			if c := condition(got, v1.VirtualMachineInstanceSynchronized); c == nil || c.Message == "" {
				t.Errorf("Synchronized = %+v, want the error message", c)
			}
			if ev := f.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+ReasonInvalidSpec) {
				t.Errorf("events = %q", ev)
			}
			if d, s := f.lv.counts(); d+s != 0 {
				t.Errorf("defines, starts = %d, %d", d, s)
			}
			// Failed is final: the next sync only lets go.
			f.observe()
			if w := f.sync(); len(w) != 0 || f.c.conns.len() != 0 {
				t.Errorf("after Failed: writes %v, %d connections", w, f.c.conns.len())
			}
		})
	}
}

func TestStartFailureIsRetried(t *testing.T) {
	vmi := newInstance()
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	f.lv.startErr = errors.New("qemu: could not open tap0")
	if err := f.c.sync(context.Background(), "ns/web"); err == nil {
		t.Fatal("sync succeeded despite the start failure")
	}
	got := f.stored()
	if c := condition(got, v1.VirtualMachineInstanceSynchronized); got.Status.Phase != v1.Scheduled || c == nil || !strings.Contains(c.Message, "tap0") {
		t.Fatalf("phase %s, Synchronized %+v", got.Status.Phase, c)
	}
	f.observe()
	f.lv.startErr = nil
	f.sync()
	got = f.stored()
	if got.Status.Phase != v1.Running || condition(got, v1.VirtualMachineInstanceSynchronized) != nil {
		t.Errorf("after the retry: phase %s, conditions %+v", got.Status.Phase, got.Status.Conditions)
	}
	if d, s := f.lv.counts(); d != 1 || s != 2 {
		t.Errorf("defines, starts = %d, %d; want 1, 2", d, s)
	}
}

func TestWaitsForSocket(t *testing.T) {
	vmi := newInstance()
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	f.notReady = true
	if w := f.sync(); len(w) != 0 {
		t.Errorf("writes = %v", w)
	}
	if f.c.queue.Len() != 0 {
		t.Fatal("requeued at once")
	}
	time.Sleep(3 * socketWaitBase)
	if f.c.queue.Len() != 1 {
		t.Fatal("not requeued after the backoff")
	}
	f.notReady = false
	f.sync()
	if f.stored().Status.Phase != v1.Running {
		t.Errorf("phase = %s once the socket is there", f.stored().Status.Phase)
	}
}

// A launcher that hangs or breaks the protocol marks its own instance, and is left alone for
// a backoff instead of taking a worker on every event; it recovers on the first good sync.
func TestLauncherFaultIsReportedAndGated(t *testing.T) {
	for _, fault := range []error{errLauncherUnresponsive, errLauncherProtocol} {
		t.Run(fault.Error(), func(t *testing.T) {
			vmi := newInstance()
			f := newFixture(t, vmi, newPod(vmi)).withOverlay()
			f.sync()
			f.observe()
			f.lv.stateErr = fmt.Errorf("getting the domain state: %w", fault)
			f.sync()
			got := f.stored()
			c := condition(got, v1.VirtualMachineInstanceSynchronized)
			want := map[error]string{errLauncherUnresponsive: ReasonLauncherUnresponsive, errLauncherProtocol: ReasonLauncherProtocolError}[fault]
			if got.Status.Phase != v1.Running || c == nil || c.Status != corev1.ConditionFalse || c.Reason != want {
				t.Fatalf("phase %s, Synchronized %+v; want Running with reason %s", got.Status.Phase, c, want)
			}
			f.observe()
			dials := f.dials
			f.sync() // the status write's own event: gated
			if f.dials != dials {
				t.Errorf("dialled again %d times within the backoff", f.dials-dials)
			}
			f.lv.stateErr = nil
			f.clock.SetTime(f.clock.Now().Add(faultBackoffBase + time.Second))
			f.sync()
			if c := condition(f.stored(), v1.VirtualMachineInstanceSynchronized); c != nil {
				t.Errorf("after recovery: Synchronized %+v", c)
			}
		})
	}
}

// A start that keeps failing fails the instance, with the reason, after maxStartAttempts.
func TestAStartThatKeepsFailingFailsTheInstance(t *testing.T) {
	vmi := newInstance()
	f := newFixture(t, vmi, newPod(vmi)).withOverlay()
	f.lv.startErr = errors.New("qemu: initrd is too large")
	for attempt := 1; attempt < maxStartAttempts; attempt++ {
		if err := f.c.sync(context.Background(), "ns/web"); err == nil {
			t.Fatalf("attempt %d succeeded", attempt)
		}
		f.c.queue.AddRateLimited("ns/web") // what the work loop does with the error
		f.observe()
		if got := f.stored(); got.Status.Phase != v1.Scheduled {
			t.Fatalf("attempt %d: phase %s, want Scheduled while retrying", attempt, got.Status.Phase)
		}
	}
	f.sync()
	got := f.stored()
	if c := condition(got, v1.VirtualMachineInstanceSynchronized); got.Status.Phase != v1.Failed || got.Status.Reason != ReasonStartFailed || c == nil || !strings.Contains(c.Message, "initrd") {
		t.Errorf("phase %s, reason %q, Synchronized %+v; want Failed %s saying why", got.Status.Phase, got.Status.Reason, c, ReasonStartFailed)
	}
}

// An instance is Scheduled once its pod is bound here; nothing is dialled or started until the
// pod runs.
func TestScheduledWaitsForItsPodToRun(t *testing.T) {
	vmi := newInstance()
	pod := newPod(vmi)
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	f := newFixture(t, vmi, pod).withOverlay()
	if w := f.sync(); len(w) != 0 || f.dials != 0 {
		t.Errorf("writes %v, dials %d; want none while the pod's containers start", w, f.dials)
	}
}

package launcher

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
)

const testDomain = "ns_vm"

// fakeHypervisor plays libvirtd: the test scripts its events, and a shutdown or destroy
// may answer with the stopped event a real guest would cause.
type fakeHypervisor struct {
	mu     sync.Mutex
	events chan LifecycleEvent
	state  libvirt.DomainState
	exists bool
	calls  []string
	// onShutdown and onDestroy, when set, are sent as events after the call.
	onShutdown, onDestroy *LifecycleEvent
	shutdownErr           error
}

func (f *fakeHypervisor) Events(context.Context) (<-chan LifecycleEvent, error) {
	return f.events, nil
}

func (f *fakeHypervisor) State(string) (libvirt.DomainState, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, f.exists, nil
}

func (f *fakeHypervisor) call(name string, then *LifecycleEvent, err error) error {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	f.mu.Unlock()
	if then != nil && err == nil {
		go func() { f.events <- *then }()
	}
	return err
}

func (f *fakeHypervisor) Shutdown(string) error {
	return f.call("shutdown", f.onShutdown, f.shutdownErr)
}
func (f *fakeHypervisor) Destroy(string) error { return f.call("destroy", f.onDestroy, nil) }

func stoppedEv(d libvirt.DomainEventStoppedDetailType) *LifecycleEvent {
	return &LifecycleEvent{Domain: testDomain, Event: libvirt.DomainEventStopped, Detail: int32(d)}
}

func TestWatch(t *testing.T) {
	running := func(f *fakeHypervisor) { f.state, f.exists = libvirt.DomainRunning, true }
	tests := []struct {
		name  string
		setup func(f *fakeHypervisor)
		grace time.Duration
		// sigterm sends SIGTERM after the events; events are sent first.
		events     []LifecycleEvent
		sigterm    bool
		daemonDies bool
		closeEvts  bool
		wantCode   int
		wantErr    bool
		wantCalls  []string
	}{
		{name: "guest shuts down", setup: running,
			events: []LifecycleEvent{*stoppedEv(libvirt.DomainEventStoppedShutdown)}, wantCode: 0},
		{name: "qemu killed", setup: running,
			events: []LifecycleEvent{*stoppedEv(libvirt.DomainEventStoppedFailed)}, wantCode: 1},
		{name: "started while watching, then crashed",
			events: []LifecycleEvent{{Domain: testDomain, Event: libvirt.DomainEventStarted}, *stoppedEv(libvirt.DomainEventStoppedCrashed)}, wantCode: 1},
		{name: "SIGTERM without a domain", sigterm: true, wantCode: 0},
		{name: "SIGTERM with a shut-off domain", setup: func(f *fakeHypervisor) { f.state, f.exists = libvirt.DomainShutoff, true },
			sigterm: true, wantCode: 0},
		{name: "SIGTERM: ACPI shutdown works", grace: time.Minute, sigterm: true,
			setup:    func(f *fakeHypervisor) { running(f); f.onShutdown = stoppedEv(libvirt.DomainEventStoppedShutdown) },
			wantCode: 0, wantCalls: []string{"shutdown"}},
		{name: "SIGTERM: guest ignores ACPI, destroyed after the grace period", grace: 20 * time.Millisecond, sigterm: true,
			setup:    func(f *fakeHypervisor) { running(f); f.onDestroy = stoppedEv(libvirt.DomainEventStoppedDestroyed) },
			wantCode: 0, wantCalls: []string{"shutdown", "destroy"}},
		{name: "SIGTERM: ACPI refused (paused guest), destroyed at once", grace: time.Minute, sigterm: true,
			setup: func(f *fakeHypervisor) {
				f.state, f.exists = libvirt.DomainPaused, true
				f.shutdownErr = errors.New("domain is not running")
				f.onDestroy = stoppedEv(libvirt.DomainEventStoppedDestroyed)
			},
			wantCode: 0, wantCalls: []string{"shutdown", "destroy"}},
		{name: "SIGTERM with grace 0 destroys at once", grace: 0, sigterm: true,
			setup:    func(f *fakeHypervisor) { running(f); f.onDestroy = stoppedEv(libvirt.DomainEventStoppedDestroyed) },
			wantCode: 0, wantCalls: []string{"destroy"}},
		{name: "SIGTERM: no stopped event after destroy", grace: 0, sigterm: true, setup: running,
			wantCode: 0, wantCalls: []string{"destroy"}},
		{name: "libvirtd dies", setup: running, daemonDies: true, wantErr: true},
		{name: "connection lost", setup: running, closeEvts: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeHypervisor{events: make(chan LifecycleEvent, 8)}
			if tc.setup != nil {
				tc.setup(f)
			}
			for _, e := range tc.events {
				f.events <- e
			}
			term := make(chan struct{})
			if tc.sigterm {
				close(term)
			}
			died := make(chan ExitStatus, 1)
			if tc.daemonDies {
				died <- ExitStatus{Pid: 42}
			}
			if tc.closeEvts {
				close(f.events)
			}
			type result struct {
				code int
				err  error
			}
			done := make(chan result, 1)
			go func() {
				code, err := watch(f, watchConfig{Domain: testDomain, Grace: tc.grace, StopWait: 50 * time.Millisecond}, term, died)
				done <- result{code, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("watch did not return")
			}
			if (r.err != nil) != tc.wantErr || (!tc.wantErr && r.code != tc.wantCode) {
				t.Errorf("got code %d, err %v; want code %d, error %v", r.code, r.err, tc.wantCode, tc.wantErr)
			}
			if tc.closeEvts && !errors.Is(r.err, errLibvirtGone) {
				t.Errorf("got %v, want errLibvirtGone", r.err)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if !slices.Equal(f.calls, tc.wantCalls) {
				t.Errorf("calls %v, want %v", f.calls, tc.wantCalls)
			}
		})
	}
}

package launcher

import (
	"testing"

	libvirt "github.com/digitalocean/go-libvirt"
)

func TestTrackerObserve(t *testing.T) {
	const dom = "ns_vm"
	ev := func(e libvirt.DomainEventType, detail int32) LifecycleEvent {
		return LifecycleEvent{Domain: dom, Event: e, Detail: detail}
	}
	stopped := func(d libvirt.DomainEventStoppedDetailType) LifecycleEvent {
		return ev(libvirt.DomainEventStopped, int32(d))
	}
	started := ev(libvirt.DomainEventStarted, 0)
	tests := []struct {
		name        string
		initial     libvirt.DomainState
		terminating bool
		events      []LifecycleEvent
		want        verdict // of the last event
	}{
		{name: "guest shutdown", events: []LifecycleEvent{started, stopped(libvirt.DomainEventStoppedShutdown)},
			want: verdict{done: true, code: 0}},
		{name: "migrated to the target pod", events: []LifecycleEvent{started, stopped(libvirt.DomainEventStoppedMigrated)},
			want: verdict{done: true, code: 0}},
		{name: "incoming migration failed", events: []LifecycleEvent{ev(libvirt.DomainEventStarted, int32(libvirt.DomainEventStartedMigrated)), stopped(libvirt.DomainEventStoppedFailed)},
			want: verdict{done: true, code: 1}},
		{name: "qemu killed", events: []LifecycleEvent{started, stopped(libvirt.DomainEventStoppedFailed)},
			want: verdict{done: true, code: 1}},
		{name: "crashed", events: []LifecycleEvent{started, ev(libvirt.DomainEventCrashed, 0), stopped(libvirt.DomainEventStoppedCrashed)},
			want: verdict{done: true, code: 1}},
		{name: "destroyed by someone else", events: []LifecycleEvent{started, stopped(libvirt.DomainEventStoppedDestroyed)},
			want: verdict{done: true, code: 1}},
		{name: "destroyed while terminating", terminating: true, events: []LifecycleEvent{started, stopped(libvirt.DomainEventStoppedDestroyed)},
			want: verdict{done: true, code: 0}},
		{name: "failed start is not the end", events: []LifecycleEvent{ev(libvirt.DomainEventDefined, 0), stopped(libvirt.DomainEventStoppedFailed)},
			want: verdict{}},
		{name: "running before the subscription", initial: libvirt.DomainRunning, events: []LifecycleEvent{stopped(libvirt.DomainEventStoppedShutdown)},
			want: verdict{done: true, code: 0}},
		{name: "paused before the subscription", initial: libvirt.DomainPaused, events: []LifecycleEvent{stopped(libvirt.DomainEventStoppedFailed)},
			want: verdict{done: true, code: 1}},
		{name: "shut off before the subscription", initial: libvirt.DomainShutoff, events: []LifecycleEvent{stopped(libvirt.DomainEventStoppedShutdown)},
			want: verdict{}},
		{name: "resumed counts as running", events: []LifecycleEvent{ev(libvirt.DomainEventResumed, 0), stopped(libvirt.DomainEventStoppedShutdown)},
			want: verdict{done: true, code: 0}},
		{name: "another domain", events: []LifecycleEvent{started, {Domain: "ns_other", Event: libvirt.DomainEventStopped}},
			want: verdict{}},
		{name: "still running", events: []LifecycleEvent{started, ev(libvirt.DomainEventSuspended, 0)},
			want: verdict{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &tracker{name: dom, terminating: tc.terminating}
			tr.initial(tc.initial)
			var got verdict
			for i, e := range tc.events {
				got = tr.observe(e)
				if got.done && i != len(tc.events)-1 {
					t.Fatalf("done after event %d (%s), before the last", i, e)
				}
			}
			if got.done != tc.want.done || got.code != tc.want.code {
				t.Errorf("got done=%v code=%d (%s), want done=%v code=%d", got.done, got.code, got.reason, tc.want.done, tc.want.code)
			}
		})
	}
}

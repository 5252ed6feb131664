package handler

import (
	"testing"

	"github.com/digitalocean/go-libvirt"
)

func TestNeverRan(t *testing.T) {
	for _, tc := range []struct {
		st   DomainStatus
		want bool
	}{
		{DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffUnknown)}, true},
		{DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffFailed)}, true},
		{DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffShutdown)}, false},
		{DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffDestroyed)}, false},
		{DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffCrashed)}, false},
		{DomainStatus{libvirt.DomainRunning, 1}, false},
		{DomainStatus{libvirt.DomainPaused, 0}, false},
	} {
		if got := neverRan(tc.st); got != tc.want {
			t.Errorf("neverRan(%+v) = %v, want %v", tc.st, got, tc.want)
		}
	}
}

func TestStopFromEvent(t *testing.T) {
	for _, tc := range []struct {
		ev   LifecycleEvent
		want DomainStatus
	}{
		{LifecycleEvent{Event: libvirt.DomainEventStopped, Detail: int32(libvirt.DomainEventStoppedShutdown)}, DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffShutdown)}},
		{LifecycleEvent{Event: libvirt.DomainEventStopped, Detail: int32(libvirt.DomainEventStoppedDestroyed)}, DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffDestroyed)}},
		{LifecycleEvent{Event: libvirt.DomainEventStopped, Detail: int32(libvirt.DomainEventStoppedCrashed)}, DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffCrashed)}},
		{LifecycleEvent{Event: libvirt.DomainEventStopped, Detail: int32(libvirt.DomainEventStoppedFailed)}, DomainStatus{libvirt.DomainShutoff, int32(libvirt.DomainShutoffFailed)}},
		{LifecycleEvent{Event: libvirt.DomainEventCrashed, Detail: 0}, DomainStatus{libvirt.DomainCrashed, 0}},
	} {
		if got := stopFromEvent(tc.ev); got != tc.want {
			t.Errorf("stopFromEvent(%+v) = %+v, want %+v", tc.ev, got, tc.want)
		}
	}
}

package launcher

import (
	"fmt"

	libvirt "github.com/digitalocean/go-libvirt"
)

// LifecycleEvent is one libvirt lifecycle event of a domain.
type LifecycleEvent struct {
	Domain string
	Event  libvirt.DomainEventType
	// Detail is the event's reason: a DomainEventStoppedDetailType for Stopped, and so on.
	Detail int32
}

func (e LifecycleEvent) String() string {
	if e.Event == libvirt.DomainEventStopped {
		return fmt.Sprintf("stopped (%s)", stoppedReason(e.Detail))
	}
	if name, ok := eventNames[e.Event]; ok {
		return fmt.Sprintf("%s (detail %d)", name, e.Detail)
	}
	return fmt.Sprintf("event %d (detail %d)", e.Event, e.Detail)
}

var eventNames = map[libvirt.DomainEventType]string{
	libvirt.DomainEventDefined:     "defined",
	libvirt.DomainEventUndefined:   "undefined",
	libvirt.DomainEventStarted:     "started",
	libvirt.DomainEventSuspended:   "suspended",
	libvirt.DomainEventResumed:     "resumed",
	libvirt.DomainEventStopped:     "stopped",
	libvirt.DomainEventShutdown:    "shutdown",
	libvirt.DomainEventPmsuspended: "pmsuspended",
	libvirt.DomainEventCrashed:     "crashed",
}

func stoppedReason(detail int32) string {
	switch libvirt.DomainEventStoppedDetailType(detail) {
	case libvirt.DomainEventStoppedShutdown:
		return "guest shutdown"
	case libvirt.DomainEventStoppedDestroyed:
		return "destroyed"
	case libvirt.DomainEventStoppedCrashed:
		return "crashed"
	case libvirt.DomainEventStoppedFailed:
		return "QEMU failed or was killed"
	case libvirt.DomainEventStoppedMigrated:
		return "migrated"
	case libvirt.DomainEventStoppedSaved:
		return "saved"
	case libvirt.DomainEventStoppedFromSnapshot:
		return "reverted to a snapshot"
	}
	return fmt.Sprintf("detail %d", detail)
}

// tracker decides, from the lifecycle of one domain, when the launcher is done and with
// what exit status. The pod's phase follows that status (restartPolicy Never): 0 makes the
// pod Succeeded, anything else Failed, and the VMI's phase follows the pod.
type tracker struct {
	name string
	// started: the domain has run while we watched. A stop before that is a failed start
	// (the handler sees its own error and may retry), not the end of the instance.
	started bool
	// terminating: the pod is being deleted and the launcher itself shut the domain down;
	// whatever stops it then is the expected end.
	terminating bool
}

// verdict is the launcher's exit once the domain is gone.
type verdict struct {
	done   bool
	code   int
	reason string
}

// active reports whether a domain in this state has a QEMU process.
func active(s libvirt.DomainState) bool {
	switch s {
	case libvirt.DomainRunning, libvirt.DomainBlocked, libvirt.DomainPaused,
		libvirt.DomainShutdown, libvirt.DomainPmsuspended:
		return true
	}
	return false
}

// initial takes the state found right after subscribing: the handler may have started the
// domain before the launcher's subscription was in place.
func (t *tracker) initial(s libvirt.DomainState) {
	if active(s) {
		t.started = true
	}
}

// observe takes one event and says whether the launcher is done.
func (t *tracker) observe(ev LifecycleEvent) verdict {
	if ev.Domain != t.name {
		return verdict{}
	}
	switch ev.Event {
	case libvirt.DomainEventStarted, libvirt.DomainEventResumed:
		t.started = true
		return verdict{}
	case libvirt.DomainEventStopped:
	default:
		return verdict{}
	}
	reason := stoppedReason(ev.Detail)
	switch {
	case !t.started:
		return verdict{}
	case t.terminating:
		return verdict{done: true, code: 0, reason: "stopped while the pod terminates: " + reason}
	case libvirt.DomainEventStoppedDetailType(ev.Detail) == libvirt.DomainEventStoppedShutdown:
		return verdict{done: true, code: 0, reason: reason}
	case libvirt.DomainEventStoppedDetailType(ev.Detail) == libvirt.DomainEventStoppedMigrated:
		// The guest runs on in the migration's target pod: this pod's work is done.
		return verdict{done: true, code: 0, reason: reason}
	default:
		// Destroyed by someone else, crashed (QEMU or the guest, with on_crash=destroy),
		// QEMU killed (OOM, kill -9: "failed"), or gone elsewhere: the instance did not end
		// the way its guest chose.
		return verdict{done: true, code: 1, reason: reason}
	}
}

package handlerapi

import (
	"net/url"
	"time"
)

// Operation is a lifecycle operation virt-api asks of the handler of an instance's node: a
// plain PUT (no websocket, empty body) on the stream server, answered 200 once libvirt did it,
// or with the refusal's status (404, 409, 503) and a text/plain reason. The names are
// KubeVirt's subresources, and its virt-handler's paths.
type Operation string

const (
	// Pause suspends the domain's vCPUs (libvirt virDomainSuspend); memory stays allocated.
	Pause Operation = "pause"
	// Unpause resumes them (virDomainResume).
	Unpause Operation = "unpause"
	// SoftReboot presses the ACPI power button with libvirt's reboot flag (virDomainReboot,
	// VIR_DOMAIN_REBOOT_ACPI_POWER_BTN): the guest shuts down and QEMU starts it again.
	SoftReboot Operation = "softreboot"
	// Freeze has the guest agent freeze the guest's file systems (virDomainFSFreeze) and
	// thaws them after the request's UnfreezeTimeoutParam unless unfrozen before.
	Freeze Operation = "freeze"
	// Unfreeze has the guest agent thaw them (virDomainFSThaw).
	Unfreeze Operation = "unfreeze"
)

// Operations are the lifecycle operations a handler serves.
var Operations = []Operation{Pause, Unpause, SoftReboot, Freeze, Unfreeze}

// UnfreezeTimeoutParam is the query parameter of Freeze: a Go duration after which the
// handler thaws the guest itself; "0s" never does.
const UnfreezeTimeoutParam = "unfreezeTimeout"

// FreezePath is the path of Freeze on namespace/name, its guest thawed after unfreezeAfter.
func FreezePath(namespace, name string, unfreezeAfter time.Duration) string {
	q := url.Values{UnfreezeTimeoutParam: {unfreezeAfter.String()}}
	return LifecyclePath(namespace, name, Freeze) + "?" + q.Encode()
}

// LifecyclePath is the path of op on namespace/name on a handler.
func LifecyclePath(namespace, name string, op Operation) string {
	return instancePath(namespace, name, string(op))
}

// LifecyclePattern is LifecyclePath as an http.ServeMux pattern.
func LifecyclePattern(op Operation) string { return instancePattern("PUT", string(op)) }

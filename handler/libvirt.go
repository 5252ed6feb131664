package handler

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/digitalocean/go-libvirt"
)

// Libvirt is the part of a launcher's libvirtd the handler uses. One value is one connection;
// the real one speaks libvirt's RPC protocol over the pod's socket (go-libvirt), tests use a
// fake.
type Libvirt interface {
	// DomainState is the domain's state and the reason for it (libvirt's virDomainGetState);
	// an error satisfying IsDomainNotFound when no domain of that name is defined.
	DomainState(name string) (DomainStatus, error)
	// DefineDomain defines (persistently, validated against libvirt's schema) a domain.
	DefineDomain(xml []byte) error
	// ProbeDefinition defines a domain, reads its definition back as libvirt completed it
	// (device addresses) and undefines it, leaving any NVRAM or TPM state file it names.
	ProbeDefinition(xml []byte) (string, error)
	// StartDomain starts a defined domain, paused (its vCPUs stopped) when asked.
	StartDomain(name string, paused bool) error
	// SuspendDomain pauses a running domain's vCPUs (virDomainSuspend); its state becomes
	// paused with reason user.
	SuspendDomain(name string) error
	// ResumeDomain lets a paused domain's vCPUs run again (virDomainResume).
	ResumeDomain(name string) error
	// RebootDomain presses the guest's ACPI power button and has QEMU start it again once it
	// powered off (virDomainReboot with VIR_DOMAIN_REBOOT_ACPI_POWER_BTN). A guest that does
	// not react to the button is not rebooted.
	RebootDomain(name string) error
	// FreezeFilesystems has the guest agent freeze every file system of the guest
	// (virDomainFSFreeze) and returns how many it froze; an error when no agent answers.
	FreezeFilesystems(name string) (int, error)
	// ThawFilesystems has the guest agent thaw them (virDomainFSThaw), returning how many.
	ThawFilesystems(name string) (int, error)
	// DomainXML is the live domain XML, with what libvirt filled in (such as MAC addresses).
	DomainXML(name string) (string, error)
	// DomainStats is the running domain's statistics as libvirt's typed parameters
	// (virConnectGetAllDomainStats: state, CPU, balloon, vCPUs, interfaces, block devices),
	// for the metrics; an error satisfying IsDomainNotFound when it is not running.
	DomainStats(name string) ([]libvirt.TypedParam, error)
	// MigrateDomain live-migrates the domain to another launcher's libvirtd and returns once
	// it ended (MigrationParams).
	MigrateDomain(name string, p MigrationParams) error
	// AbortJob cancels the domain's running job, such as an outgoing migration.
	AbortJob(name string) error
	// CompletedMigration reads libvirt's statistics of the domain's completed incoming migration.
	CompletedMigration(name string) (MigrationStats, error)
	// GuestInfo asks the guest's agent, through libvirt (virDomainGetGuestInfo), for what
	// guestagent.Types names; an error when no agent answers.
	GuestInfo(name string) ([]libvirt.TypedParam, error)
	// Screenshot writes the image of the domain's display to w (QEMU's screendump through
	// virDomainScreenshot: a PNG from QEMU 7.1 on) and returns its MIME type, "" when unknown.
	Screenshot(name string, w io.Writer) (string, error)
	// LifecycleEvents streams every domain's lifecycle events, and its guest agent's
	// connects and disconnects, until ctx ends or the connection is lost; the channel is then
	// closed.
	LifecycleEvents(ctx context.Context) (<-chan LifecycleEvent, error)
	// Disconnected is closed once the connection is lost or closed.
	Disconnected() <-chan struct{}
	// PeerPID is the process ID of the libvirtd at the other end as this node sees it (the
	// socket's peer credentials; the handler runs in the host's PID namespace), 0 if unknown.
	PeerPID() int
	// Close ends the connection.
	Close() error
}

// DomainStatus is a domain's state and its reason, with libvirt's numbers: State is a
// libvirt.DomainState, Reason the matching libvirt.Domain<State>Reason.
type DomainStatus struct {
	State  libvirt.DomainState
	Reason int32
}

// LifecycleEvent is libvirt's domain lifecycle event: Event is a libvirt.DomainEventType,
// Detail the matching libvirt.DomainEvent<Type>DetailType. An event of the guest agent has
// Agent set instead (connected or disconnected).
type LifecycleEvent struct {
	Domain string
	Event  libvirt.DomainEventType
	Detail int32
	Agent  libvirt.ConnectDomainEventAgentLifecycleState
}

// Dialer connects to the libvirtd of a launcher pod whose private emptyDir the handler sees at
// privateDir. It returns an error wrapping ErrSocketNotReady while libvirtd is not listening.
type Dialer func(ctx context.Context, privateDir string) (Libvirt, error)

// ErrSocketNotReady means the launcher's libvirtd does not accept connections yet.
var ErrSocketNotReady = errors.New("the launcher's libvirt socket is not ready")

// errLauncherUnresponsive is a launcher's libvirtd not answering in time: stopped, hung, or
// starved. Like errLauncherProtocol, it fails that launcher's instance only, and is retried
// with a backoff of its own (launcherGate).
var errLauncherUnresponsive = errors.New("the launcher's libvirtd did not answer")

// isLauncherFault reports a launcher that misbehaves rather than one that is starting or exiting.
func isLauncherFault(err error) bool {
	return errors.Is(err, errLauncherUnresponsive) || errors.Is(err, errLauncherProtocol)
}

// errDomainNotFound is what fakes return for a missing domain.
var errDomainNotFound = libvirt.Error{Code: uint32(libvirt.ErrNoDomain), Message: "domain not found"}

// connectionLost reports an error that means libvirtd went away during the call (the launcher
// is exiting): not a sync failure, the domain's last events tell what happened.
func connectionLost(lv Libvirt, err error) bool {
	if err == nil {
		return false
	}
	select {
	case <-lv.Disconnected():
		return true
	default:
	}
	for _, lost := range []error{libvirt.ErrInterrupted, syscall.EINVAL, syscall.EPIPE, syscall.ECONNRESET, io.EOF, io.ErrClosedPipe, net.ErrClosed} {
		if errors.Is(err, lost) {
			return true
		}
	}
	return false
}

// IsDomainNotFound reports libvirt's VIR_ERR_NO_DOMAIN.
func IsDomainNotFound(err error) bool { return libvirt.IsNotFound(err) }

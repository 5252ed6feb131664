package handler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/vmctl/vmctl/handler/guestagent"
	"github.com/vmctl/vmctl/launcher/layout"
)

// Bounds on exchanges with a launcher's libvirtd. Starting takes ~0.4 s (QEMU launched, its
// monitor connected); much more only on a starved node. Connecting and queries are quick: a
// daemon that does not answer them in seconds is stopped or hung.
const (
	connectTimeout = 5 * time.Second
	queryTimeout   = 10 * time.Second
	callTimeout    = 20 * time.Second
	startTimeout   = 60 * time.Second
	// closeTimeout bounds how long Close waits for libvirtd to acknowledge the goodbye.
	closeTimeout = 5 * time.Second
)

// DialLibvirt is the real Dialer: it connects to <privateDir>/libvirt/libvirt-sock (see
// dialLauncherSocket for why not by path) and opens qemu:///session on it (the launcher's libvirtd is its user's session daemon).
// Every frame libvirtd sends passes frameGuard first.
func DialLibvirt(_ context.Context, privateDir string) (Libvirt, error) {
	conn, err := dialLauncherSocket(privateDir, layout.SocketRel)
	if err != nil {
		return nil, err
	}
	guard := newFrameGuard(conn)
	g := &goLibvirt{l: libvirt.NewWithDialer(dialers.NewAlreadyConnected(guard)), conn: conn, guard: guard}
	err = g.call("connecting to libvirt", connectTimeout, func() error { return g.l.ConnectToURI(libvirt.QEMUSession) })
	if err != nil {
		_ = conn.Close()
		if isLauncherFault(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: connecting to libvirt: %v", ErrSocketNotReady, err)
	}
	return g, nil
}

// PeerPID is the pid libvirtd had when it accepted the connection.
func (g *goLibvirt) PeerPID() int { return peerPID(g.conn) }

// goLibvirt is Libvirt over go-libvirt.
type goLibvirt struct {
	l     *libvirt.Libvirt
	conn  net.Conn
	guard *frameGuard
}

// call runs one exchange with libvirtd, bounded by timeout: go-libvirt waits for answers
// forever, and a launcher whose libvirtd hangs must not hold a worker. On timeout the
// connection is closed, which ends the call; the next sync dials again. A panic in go-libvirt
// while decoding is this launcher's failure, not the agent's; so is a frame the guard refused.
func (g *goLibvirt) call(what string, timeout time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				_ = g.conn.Close()
				done <- fmt.Errorf("%s: %w: %v", what, errLauncherProtocol, r)
			}
		}()
		done <- f()
	}()
	select {
	case err := <-done:
		if gerr := g.guard.err(); err != nil && gerr != nil {
			return fmt.Errorf("%s: %w", what, gerr)
		}
		return err
	case <-time.After(timeout):
		_ = g.conn.Close()
		return fmt.Errorf("%s: %w within %s", what, errLauncherUnresponsive, timeout)
	}
}

func (g *goLibvirt) DomainState(name string) (DomainStatus, error) {
	var st DomainStatus
	err := g.call("getting the domain state", queryTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		state, reason, err := g.l.DomainGetState(dom, 0)
		st = DomainStatus{State: libvirt.DomainState(state), Reason: reason}
		return err
	})
	if err != nil {
		// Also after a timeout, while f may still write st.
		return DomainStatus{}, err
	}
	return st, nil
}

// DefineDomain defines the domain without libvirt's schema validation (as KubeVirt does): the
// XML is libvirtxml's rendering of an admitted instance, and loading the RNG schema cost each
// launcher's libvirtd 2 MiB of heap it never returned, and CPU, on every start.
func (g *goLibvirt) DefineDomain(xml []byte) error {
	return g.call("defining the domain", callTimeout, func() error {
		_, err := g.l.DomainDefineXMLFlags(string(xml), 0)
		return err
	})
}

func (g *goLibvirt) ProbeDefinition(xml []byte) (string, error) {
	var out string
	err := g.call("probing the domain's definition", callTimeout, func() error {
		dom, err := g.l.DomainDefineXMLFlags(string(xml), 0)
		if err != nil {
			return err
		}
		out, err = g.l.DomainGetXMLDesc(dom, libvirt.DomainXMLInactive)
		if uerr := g.l.DomainUndefineFlags(dom, libvirt.DomainUndefineKeepNvram|libvirt.DomainUndefineKeepTpm); err == nil {
			err = uerr
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

func (g *goLibvirt) StartDomain(name string, paused bool) error {
	return g.call("starting the domain", startTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		if paused {
			_, err = g.l.DomainCreateWithFlags(dom, uint32(libvirt.DomainStartPaused))
			return err
		}
		return g.l.DomainCreate(dom)
	})
}

func (g *goLibvirt) SuspendDomain(name string) error {
	return g.onDomain("pausing the domain", name, g.l.DomainSuspend)
}

func (g *goLibvirt) ResumeDomain(name string) error {
	return g.onDomain("resuming the domain", name, g.l.DomainResume)
}

func (g *goLibvirt) RebootDomain(name string) error {
	return g.onDomain("rebooting the domain", name, func(dom libvirt.Domain) error {
		return g.l.DomainReboot(dom, libvirt.DomainRebootAcpiPowerBtn)
	})
}

func (g *goLibvirt) FreezeFilesystems(name string) (int, error) {
	return g.onFilesystems("freezing the guest's file systems", name, g.l.DomainFsfreeze)
}

func (g *goLibvirt) ThawFilesystems(name string) (int, error) {
	return g.onFilesystems("thawing the guest's file systems", name, g.l.DomainFsthaw)
}

// onFilesystems calls f on all the guest's file systems (no mount points named) and returns
// how many it reached.
func (g *goLibvirt) onFilesystems(what, name string, f func(libvirt.Domain, []string, uint32) (int32, error)) (n int, err error) {
	err = g.onDomain(what, name, func(dom libvirt.Domain) error {
		count, err := f(dom, nil, 0)
		n = int(count)
		return err
	})
	return n, err
}

// onDomain looks the domain up and calls f on it, bounded as any call that changes a domain.
func (g *goLibvirt) onDomain(what, name string, f func(libvirt.Domain) error) error {
	return g.call(what, callTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		return f(dom)
	})
}

func (g *goLibvirt) DomainXML(name string) (string, error) {
	var out string
	err := g.call("reading the domain XML", queryTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		out, err = g.l.DomainGetXMLDesc(dom, 0)
		return err
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// statsGroups are the statistics the metrics read (handler/metrics).
const statsGroups = libvirt.DomainStatsState | libvirt.DomainStatsCPUTotal | libvirt.DomainStatsBalloon |
	libvirt.DomainStatsVCPU | libvirt.DomainStatsInterface | libvirt.DomainStatsBlock

// DomainStats asks for the statistics of every running domain, one round trip: a launcher's
// libvirtd has only its instance's.
func (g *goLibvirt) DomainStats(name string) ([]libvirt.TypedParam, error) {
	var params []libvirt.TypedParam
	err := g.call("reading the domain statistics", queryTimeout, func() error {
		records, err := g.l.ConnectGetAllDomainStats(nil, uint32(statsGroups), uint32(libvirt.ConnectGetAllDomainsStatsActive))
		if err != nil {
			return err
		}
		for _, r := range records {
			if r.Dom.Name == name {
				params = r.Params
				return nil
			}
		}
		return libvirt.Error{Code: uint32(libvirt.ErrNoDomain), Message: "domain " + name + " is not running"}
	})
	if err != nil {
		return nil, err
	}
	return params, nil
}

func (g *goLibvirt) LifecycleEvents(ctx context.Context) (<-chan LifecycleEvent, error) {
	var in <-chan libvirt.DomainEventLifecycleMsg
	var agent <-chan any
	err := g.call("subscribing to domain events", queryTimeout, func() (err error) {
		if in, err = g.l.LifecycleEvents(ctx); err != nil {
			return err
		}
		agent, err = g.l.SubscribeEvents(ctx, libvirt.DomainEventIDAgentLifecycle, libvirt.OptDomain{})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(chan LifecycleEvent)
	send := func(ev LifecycleEvent) {
		select {
		case out <- ev:
		case <-ctx.Done():
			// Drain so go-libvirt's goroutines can finish and close their channels.
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev := range in {
			send(LifecycleEvent{Domain: ev.Dom.Name, Event: libvirt.DomainEventType(ev.Event), Detail: ev.Detail})
		}
	})
	wg.Go(func() {
		for ev := range agent {
			if msg, ok := ev.(*libvirt.DomainEventCallbackAgentLifecycleMsg); ok {
				send(LifecycleEvent{Domain: msg.Dom.Name, Agent: libvirt.ConnectDomainEventAgentLifecycleState(msg.State)})
			}
		}
	})
	go func() {
		wg.Wait()
		close(out)
	}()
	return out, nil
}

// GuestInfo is bounded as a query: libvirt itself gives up on an agent after 5 s.
func (g *goLibvirt) GuestInfo(name string) ([]libvirt.TypedParam, error) {
	var params []libvirt.TypedParam
	err := g.call("asking the guest agent", queryTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		params, err = g.l.DomainGetGuestInfo(dom, uint32(guestagent.Types), 0)
		return err
	})
	if err != nil {
		return nil, err
	}
	return params, nil
}

func (g *goLibvirt) Disconnected() <-chan struct{} { return g.l.Disconnected() }

// Close says goodbye to libvirtd, but does not wait long for a daemon that stopped answering:
// closing the socket then ends every pending call.
func (g *goLibvirt) Close() error {
	done := make(chan error, 1)
	go func() { done <- g.l.Disconnect() }()
	select {
	case err := <-done:
		_ = g.conn.Close()
		return err
	case <-time.After(closeTimeout):
		return g.conn.Close()
	}
}

func (g *goLibvirt) Screenshot(name string, w io.Writer) (string, error) {
	var mime libvirt.OptString
	out := &countingWriter{w: w}
	err := g.call("taking a screenshot", queryTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		mime, err = g.l.DomainScreenshot(dom, out, 0, 0)
		var lerr libvirt.Error
		if err != nil && !errors.As(err, &lerr) && !errors.Is(err, libvirt.ErrInterrupted) && out.n > 0 {
			// go-libvirt reads the MIME type from the stream's last frame, which is empty,
			// rather than from the reply: it fails decoding once the image arrived whole.
			// The caller checks the image itself.
			return nil
		}
		return err
	})
	if err != nil || len(mime) == 0 {
		return "", err
	}
	return mime[0], nil
}

// countingWriter counts what passes through it to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

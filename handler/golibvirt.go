package handler

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"

	"github.com/vmctl/vmctl/launcher/layout"
)

// Bounds on exchanges with a launcher's libvirtd. Starting takes ~0.4 s (QEMU launched, its
// monitor connected); much more only on a starved node.
const (
	callTimeout  = 20 * time.Second
	startTimeout = 60 * time.Second
	// closeTimeout bounds how long Close waits for libvirtd to acknowledge the goodbye.
	closeTimeout = 5 * time.Second
)

// DialLibvirt is the real Dialer: it connects to <privateDir>/libvirt/libvirt-sock (see
// dialLauncherSocket for why not by path) and opens qemu:///session on it (the launcher's libvirtd is its user's session daemon).
func DialLibvirt(_ context.Context, privateDir string) (Libvirt, error) {
	conn, err := dialLauncherSocket(privateDir, layout.SocketRel)
	if err != nil {
		return nil, err
	}
	l := libvirt.NewWithDialer(dialers.NewAlreadyConnected(conn))
	if err := l.ConnectToURI(libvirt.QEMUSession); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("%w: connecting to libvirt: %v", ErrSocketNotReady, err)
	}
	return &goLibvirt{l: l, conn: conn}, nil
}

// PeerPID is the pid libvirtd had when it accepted the connection.
func (g *goLibvirt) PeerPID() int { return peerPID(g.conn) }

// goLibvirt is Libvirt over go-libvirt.
type goLibvirt struct {
	l    *libvirt.Libvirt
	conn net.Conn
}

// call runs one exchange with libvirtd, bounded by timeout: go-libvirt waits for answers
// forever, and a launcher whose libvirtd hangs must not hold a worker. On timeout the
// connection is closed, which ends the call; the next sync dials again.
func (g *goLibvirt) call(what string, timeout time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		_ = g.conn.Close()
		return fmt.Errorf("%s: libvirtd did not answer within %s", what, timeout)
	}
}

func (g *goLibvirt) DomainState(name string) (DomainStatus, error) {
	var st DomainStatus
	err := g.call("getting the domain state", callTimeout, func() error {
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

func (g *goLibvirt) DefineDomain(xml []byte) error {
	return g.call("defining the domain", callTimeout, func() error {
		_, err := g.l.DomainDefineXMLFlags(string(xml), libvirt.DomainDefineValidate)
		return err
	})
}

func (g *goLibvirt) StartDomain(name string) error {
	return g.call("starting the domain", startTimeout, func() error {
		dom, err := g.l.DomainLookupByName(name)
		if err != nil {
			return err
		}
		return g.l.DomainCreate(dom)
	})
}

func (g *goLibvirt) DomainXML(name string) (string, error) {
	var out string
	err := g.call("reading the domain XML", callTimeout, func() error {
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

func (g *goLibvirt) LifecycleEvents(ctx context.Context) (<-chan LifecycleEvent, error) {
	in, err := g.l.LifecycleEvents(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan LifecycleEvent)
	go func() {
		defer close(out)
		for ev := range in {
			select {
			case out <- LifecycleEvent{Domain: ev.Dom.Name, Event: libvirt.DomainEventType(ev.Event), Detail: ev.Detail}:
			case <-ctx.Done():
				// Drain so go-libvirt's goroutine can finish and close in.
			}
		}
	}()
	return out, nil
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

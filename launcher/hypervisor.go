package launcher

import (
	"context"
	"fmt"
	"time"

	libvirt "github.com/digitalocean/go-libvirt"
	"github.com/digitalocean/go-libvirt/socket/dialers"
)

// hypervisor is what the launcher needs from libvirt, so that the watch loop can be tested
// with a fake. Domains are named, as the launcher only ever knows its domain's name.
type hypervisor interface {
	// Events streams lifecycle events of all domains; the channel closes when the
	// connection to libvirtd is lost.
	Events(ctx context.Context) (<-chan LifecycleEvent, error)
	// State is the domain's state; exists is false when no such domain is defined.
	State(name string) (state libvirt.DomainState, exists bool, err error)
	// Shutdown presses the ACPI power button.
	Shutdown(name string) error
	// Destroy kills QEMU at once.
	Destroy(name string) error
}

// libvirtConn is the hypervisor over the pod's own libvirtd (go-libvirt: RPC on the unix
// socket, no cgo, so the binary stays static).
type libvirtConn struct {
	l *libvirt.Libvirt
}

// connectLibvirt opens a connection to the libvirtd behind socket.
func connectLibvirt(socket string) (*libvirtConn, error) {
	l := libvirt.NewWithDialer(dialers.NewLocal(dialers.WithSocket(socket), dialers.WithLocalTimeout(5*time.Second)))
	if err := l.ConnectToURI(libvirt.QEMUSession); err != nil {
		return nil, fmt.Errorf("connect to libvirtd at %s: %w", socket, err)
	}
	return &libvirtConn{l: l}, nil
}

func (c *libvirtConn) Close() error { return c.l.Disconnect() }

func (c *libvirtConn) Events(ctx context.Context) (<-chan LifecycleEvent, error) {
	in, err := c.l.LifecycleEvents(ctx)
	if err != nil {
		return nil, fmt.Errorf("subscribe to lifecycle events: %w", err)
	}
	out := make(chan LifecycleEvent)
	go func() {
		defer close(out)
		for {
			select {
			case msg, ok := <-in:
				if !ok {
					return
				}
				ev := LifecycleEvent{Domain: msg.Dom.Name, Event: libvirt.DomainEventType(msg.Event), Detail: msg.Detail}
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			case <-c.l.Disconnected():
				// go-libvirt does not always close event streams when the socket dies.
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (c *libvirtConn) State(name string) (libvirt.DomainState, bool, error) {
	dom, err := c.l.DomainLookupByName(name)
	if libvirt.IsNotFound(err) {
		return libvirt.DomainNostate, false, nil
	}
	if err != nil {
		return libvirt.DomainNostate, false, err
	}
	state, _, err := c.l.DomainGetState(dom, 0)
	if libvirt.IsNotFound(err) {
		return libvirt.DomainNostate, false, nil
	}
	return libvirt.DomainState(state), err == nil, err
}

func (c *libvirtConn) Shutdown(name string) error {
	dom, err := c.l.DomainLookupByName(name)
	if err != nil {
		return err
	}
	return c.l.DomainShutdownFlags(dom, libvirt.DomainShutdownAcpiPowerBtn)
}

func (c *libvirtConn) Destroy(name string) error {
	dom, err := c.l.DomainLookupByName(name)
	if err != nil {
		return err
	}
	return c.l.DomainDestroy(dom)
}

// setAuthorizedKeys replaces a user's authorized SSH keys in domain's guest through its agent.
func (c *libvirtConn) setAuthorizedKeys(domain string) func(user string, keys []string) error {
	return func(user string, keys []string) error {
		dom, err := c.l.DomainLookupByName(domain)
		if err != nil {
			return err
		}
		return c.l.DomainAuthorizedSshKeysSet(dom, user, keys, 0)
	}
}

// setUserPassword sets a user's password in domain's guest through its agent (chpasswd).
func (c *libvirtConn) setUserPassword(domain string) func(user, password string) error {
	return func(user, password string) error {
		dom, err := c.l.DomainLookupByName(domain)
		if err != nil {
			return err
		}
		return c.l.DomainSetUserPassword(dom, libvirt.OptString{user}, libvirt.OptString{password}, 0)
	}
}

package forward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// Bounds on what the pod's clients may hold open: vmctl has a small memory limit, and a flood
// of connections must cost the flood, not vmctl.
const (
	// maxConnections is the most TCP connections one port relays at once; more are closed.
	maxConnections = 512
	// maxSessions is the most UDP clients one port relays for at once; more are dropped.
	maxSessions = 512
	// udpIdle ends a UDP client's session after this long without a datagram either way.
	udpIdle = 2 * time.Minute
	// dialTimeout bounds the connection to the guest.
	dialTimeout = 5 * time.Second
)

// Target says where the guest is now: its address on the pod network, or why it has none (no
// instance yet, not running). It is asked once per TCP connection and per UDP datagram, so a
// clone re-created on a new address is followed.
type Target func() (netip.Addr, error)

// Forwarder relays the pod's ports to its clone's guest.
type Forwarder struct {
	tcp []*tcpPort
	udp []*udpPort
}

// Listen binds every port before anything is relayed, so a port that is taken or needs a
// privilege fails vmctl at its start, naming the port.
func Listen(ports []Port, target Target) (*Forwarder, error) {
	f := &Forwarder{}
	for _, p := range ports {
		addr := fmt.Sprintf(":%d", p.Listen)
		switch p.Protocol {
		case UDP:
			conn, err := net.ListenPacket("udp", addr)
			if err != nil {
				f.close()
				return nil, fmt.Errorf("--forward %s: %w", p, err)
			}
			f.udp = append(f.udp, &udpPort{Port: p, conn: conn.(*net.UDPConn), target: target, sessions: map[netip.AddrPort]*udpSession{}})
		default:
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				f.close()
				return nil, fmt.Errorf("--forward %s: %w", p, err)
			}
			f.tcp = append(f.tcp, &tcpPort{Port: p, ln: ln, target: target, slots: make(chan struct{}, maxConnections)})
		}
	}
	return f, nil
}

// Serve relays until ctx ends, then closes the listeners and every relayed connection.
func (f *Forwarder) Serve(ctx context.Context) {
	var wg sync.WaitGroup
	for _, t := range f.tcp {
		wg.Go(func() { t.serve(ctx) })
	}
	for _, u := range f.udp {
		wg.Go(func() { u.serve(ctx) })
	}
	klog.FromContext(ctx).Info("forwarding the pod's ports to the clone's guest", "ports", f.ports())
	wg.Wait()
}

func (f *Forwarder) ports() []string {
	var out []string
	for _, t := range f.tcp {
		out = append(out, t.Port.String())
	}
	for _, u := range f.udp {
		out = append(out, u.Port.String())
	}
	return out
}

func (f *Forwarder) close() {
	for _, t := range f.tcp {
		_ = t.ln.Close()
	}
	for _, u := range f.udp {
		_ = u.conn.Close()
	}
}

// closed says whether err is the end of a listener or connection we closed.
func closed(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, net.ErrClosed)
}

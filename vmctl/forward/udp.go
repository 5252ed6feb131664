package forward

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// udpPort relays datagrams: each client address gets a session, a socket connected to the
// guest, whose replies go back to that client from the port it wrote to.
type udpPort struct {
	Port
	conn   *net.UDPConn
	target Target

	mu       sync.Mutex
	sessions map[netip.AddrPort]*udpSession
}

type udpSession struct {
	guest *net.UDPConn
	// addr is the guest address the session was made for: a clone on a new address gets a
	// new session.
	addr netip.Addr
	// lastSent is when the client last wrote (unix nanoseconds), so a client that only sends
	// keeps its session.
	lastSent atomic.Int64
}

func (u *udpPort) serve(ctx context.Context) {
	log := klog.FromContext(ctx).WithValues("port", u.Port.String())
	stop := context.AfterFunc(ctx, func() { _ = u.conn.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer u.closeSessions()
	buf := make([]byte, 64*1024)
	for {
		n, client, err := u.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if closed(ctx, err) {
				return
			}
			continue
		}
		s := u.session(log, client, &wg)
		if s == nil {
			continue
		}
		s.lastSent.Store(time.Now().UnixNano())
		if _, err := s.guest.Write(buf[:n]); err != nil {
			log.V(2).Info("dropping a datagram", "client", client, "err", err.Error())
		}
	}
}

// session finds or makes client's session with the guest where it is now; nil drops the
// datagram (no guest, or too many clients).
func (u *udpPort) session(log klog.Logger, client netip.AddrPort, wg *sync.WaitGroup) *udpSession {
	addr, err := u.target()
	if err != nil {
		log.V(1).Info("dropping a datagram: no guest to forward to", "client", client, "reason", err.Error())
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if s := u.sessions[client]; s != nil {
		if s.addr == addr {
			return s
		}
		// Its reply loop ends on the close and leaves the new session alone.
		_ = s.guest.Close()
		delete(u.sessions, client)
	}
	if len(u.sessions) >= maxSessions {
		log.V(1).Info("dropping a datagram: too many clients", "limit", maxSessions, "client", client)
		return nil
	}
	guest, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, uint16(u.Target))))
	if err != nil {
		log.V(1).Info("dropping a datagram", "client", client, "err", err.Error())
		return nil
	}
	s := &udpSession{guest: guest, addr: addr}
	u.sessions[client] = s
	wg.Go(func() { u.replies(client, s) })
	return s
}

// replies sends the guest's answers back to client until the session has been idle for
// udpIdle or is closed.
func (u *udpPort) replies(client netip.AddrPort, s *udpSession) {
	defer func() {
		_ = s.guest.Close()
		u.mu.Lock()
		if u.sessions[client] == s {
			delete(u.sessions, client)
		}
		u.mu.Unlock()
	}()
	buf := make([]byte, 64*1024)
	for {
		_ = s.guest.SetReadDeadline(time.Now().Add(udpIdle))
		n, err := s.guest.Read(buf)
		switch {
		case err == nil:
			_, _ = u.conn.WriteToUDPAddrPort(buf[:n], client)
		case errors.Is(err, os.ErrDeadlineExceeded):
			if time.Since(time.Unix(0, s.lastSent.Load())) >= udpIdle {
				return
			}
		case errors.Is(err, net.ErrClosed):
			return
		}
		// Other errors are the guest's ICMP answers (port unreachable): the session stays.
	}
}

func (u *udpPort) closeSessions() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, s := range u.sessions {
		_ = s.guest.Close()
	}
}

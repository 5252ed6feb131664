package forward

import (
	"context"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// tcpPort relays each connection to one port to a new connection to the guest.
type tcpPort struct {
	Port
	ln     net.Listener
	target Target
	// slots holds one token per relayed connection (maxConnections).
	slots chan struct{}
}

func (t *tcpPort) serve(ctx context.Context) {
	log := klog.FromContext(ctx).WithValues("port", t.Port.String())
	stop := context.AfterFunc(ctx, func() { _ = t.ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		client, err := t.ln.Accept()
		if err != nil {
			if closed(ctx, err) {
				return
			}
			// Out of file descriptors and the like: let the relays finish some.
			log.Error(err, "accepting a connection")
			time.Sleep(100 * time.Millisecond)
			continue
		}
		select {
		case t.slots <- struct{}{}:
		default:
			log.V(1).Info("refusing a connection: too many open", "limit", maxConnections, "client", client.RemoteAddr())
			_ = client.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-t.slots }()
			t.relay(ctx, log, client)
		})
	}
}

// relay copies both ways until both sides have finished sending, passing each side's end of
// sending (a half close) on to the other, as a direct connection would.
func (t *tcpPort) relay(ctx context.Context, log klog.Logger, client net.Conn) {
	defer func() { _ = client.Close() }()
	addr, err := t.target()
	if err != nil {
		log.V(1).Info("closing a connection: no guest to forward to", "client", client.RemoteAddr(), "reason", err.Error())
		return
	}
	dialer := net.Dialer{Timeout: dialTimeout}
	guest, err := dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(addr, uint16(t.Target)).String())
	if err != nil {
		log.V(1).Info("closing a connection: the guest refused it", "client", client.RemoteAddr(), "err", err.Error())
		return
	}
	defer func() { _ = guest.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = client.Close(); _ = guest.Close() })
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { pipe(guest, client) })
	pipe(client, guest)
	wg.Wait()
}

// pipe copies src to dst; at src's end it closes dst for writing, and on an error (a reset)
// it closes both, which ends the other direction too.
func pipe(dst, src net.Conn) {
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		_ = src.Close()
		return
	}
	if hc, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = hc.CloseWrite()
		return
	}
	_ = dst.Close()
}

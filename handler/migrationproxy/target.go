package migrationproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// Target accepts a migration's connections on a TLS listener and forwards each to the unix
// socket of the channel it names.
type Target struct {
	ln    net.Listener
	cfg   *tls.Config
	dials map[string]Dial
	g     *group

	once     sync.Once
	closeErr error
}

// NewTarget listens on addr (the handler's pod IP, port 0 for any) with cfg, a
// handlerapi.PeerServerConfig, and forwards each channel's connections to what its Dial
// connects to. It dials per connection, not now: the target QEMU creates its sockets only
// once the migration begins.
func NewTarget(addr string, cfg *tls.Config, dials map[string]Dial) (*Target, error) {
	if err := checkChannels(dials, func(d Dial) bool { return d == nil }); err != nil {
		return nil, err
	}
	if cfg == nil || (cfg.ClientAuth != tls.RequireAnyClientCert && cfg.ClientAuth != tls.RequireAndVerifyClientCert) {
		// Whoever reaches the port would reach the target pod's libvirtd and QEMU.
		return nil, errors.New("target needs a TLS configuration that requires client certificates")
	}
	// Listen in plain TCP and do TLS per connection, so that Close can close the transport
	// without waiting on a close_notify to a peer that has stopped reading.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	t := &Target{ln: ln, cfg: cfg, dials: maps.Clone(dials), g: newGroup()}
	t.g.run(t.accept)
	klog.InfoS("migration target listening", "addr", ln.Addr().String())
	return t, nil
}

// Port is the TCP port the target listens on, for the source to dial.
func (t *Target) Port() int {
	return t.ln.Addr().(*net.TCPAddr).Port
}

// Close stops accepting and closes every forwarded connection; it returns once all the
// target's goroutines have ended.
func (t *Target) Close() error {
	t.once.Do(func() {
		t.closeErr = t.ln.Close()
		t.g.shut()
	})
	return t.closeErr
}

func (t *Target) accept() {
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if !retryAccept(t.g, err) {
				return
			}
			continue
		}
		if err := t.g.start(conn, func() { t.serve(conn) }); errors.Is(err, errFull) {
			klog.ErrorS(err, "migration target refused a connection", "from", conn.RemoteAddr().String())
		}
	}
}

// serve authenticates one connection, reads its channel and connects it to that channel's
// socket. conn is closed by the group once serve returns.
func (t *Target) serve(conn net.Conn) {
	from := conn.RemoteAddr().String()
	tc := tls.Server(conn, t.cfg)
	conn.SetDeadline(time.Now().Add(setupTimeout))
	if err := tc.HandshakeContext(t.g.ctx); err != nil {
		klog.ErrorS(err, "migration connection refused", "from", from)
		return
	}
	ch, err := readLine(tc, maxHeader)
	if err != nil {
		klog.ErrorS(err, "migration connection without a channel", "from", from)
		return
	}
	dial, ok := t.dials[ch]
	if !ok {
		klog.ErrorS(nil, "migration connection for an unknown channel", "from", from, "channel", ch)
		return
	}
	conn.SetDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(t.g.ctx, setupTimeout)
	uc, err := dial(ctx)
	cancel()
	if err != nil {
		klog.ErrorS(err, "migration channel unreachable", "channel", ch)
		return
	}
	if !t.g.add(uc) {
		return
	}
	defer t.g.drop(uc)
	splice(tc, uc, func() { conn.Close(); uc.Close() })
}

// readLine reads up to and without a newline, at most max bytes with it. It reads byte by byte
// (from the TLS record buffer, not the network) so that no byte of the channel after the line
// is consumed.
func readLine(r io.Reader, max int) (string, error) {
	line := make([]byte, 0, max)
	b := make([]byte, 1)
	for len(line) < max {
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		if b[0] == '\n' {
			return string(line), nil
		}
		line = append(line, b[0])
	}
	return "", fmt.Errorf("no newline in the first %d bytes", max)
}

// retryAccept says whether an accept loop should go on after err: not once the listener is
// closed; after a pause otherwise (such as running out of file descriptors), unless the
// group is shut meanwhile.
func retryAccept(g *group, err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	klog.ErrorS(err, "migration proxy accept")
	select {
	case <-g.ctx.Done():
		return false
	case <-time.After(100 * time.Millisecond):
		return true
	}
}

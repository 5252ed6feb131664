package migrationproxy

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// Source listens on one unix socket per channel and forwards each connection to the target,
// over TLS, naming the channel.
type Source struct {
	target string
	cfg    *tls.Config
	lns    []net.Listener
	g      *group

	once     sync.Once
	closeErr error
}

// NewSource accepts on the listener given for each channel (unix sockets in the source pod,
// where the unprivileged libvirt and QEMU connect; the caller makes them, see Dial for why) and
// forwards their connections to the Target at target (host:port) with cfg, a
// handlerapi.PeerClientConfig. The Source owns the listeners from then on.
func NewSource(target string, cfg *tls.Config, listeners map[string]net.Listener) (*Source, error) {
	if err := checkChannels(listeners, func(l net.Listener) bool { return l == nil }); err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, errors.New("source needs a TLS configuration")
	}
	s := &Source{target: target, cfg: cfg, g: newGroup()}
	for ch, ln := range listeners {
		s.lns = append(s.lns, ln)
		s.g.run(func() { s.accept(ln, ch) })
	}
	klog.InfoS("migration source listening", "target", target, "channels", len(listeners))
	return s, nil
}

// Close closes the listeners and every forwarded connection;
// it returns once all the source's goroutines have ended.
func (s *Source) Close() error {
	s.once.Do(func() {
		var errs []error
		for _, ln := range s.lns {
			errs = append(errs, ln.Close())
		}
		s.closeErr = errors.Join(errs...)
		s.g.shut()
	})
	return s.closeErr
}

func (s *Source) accept(ln net.Listener, ch string) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if !retryAccept(s.g, err) {
				return
			}
			continue
		}
		if err := s.g.start(conn, func() { s.forward(conn, ch) }); errors.Is(err, errFull) {
			klog.ErrorS(err, "migration source refused a connection", "channel", ch)
		}
	}
}

// forward connects conn, a connection of channel ch, to the target. conn is closed by the
// group once forward returns; closing it is how a failure reaches libvirt or QEMU.
func (s *Source) forward(conn net.Conn, ch string) {
	d := net.Dialer{Timeout: setupTimeout}
	raw, err := d.DialContext(s.g.ctx, "tcp", s.target)
	if err != nil {
		klog.ErrorS(err, "migration target unreachable", "target", s.target, "channel", ch)
		return
	}
	if !s.g.add(raw) {
		return
	}
	defer s.g.drop(raw)
	// TLS on the tracked TCP connection, as on the target, so that closing raw aborts at once.
	tc := tls.Client(raw, s.cfg)
	raw.SetDeadline(time.Now().Add(setupTimeout))
	if err := tc.HandshakeContext(s.g.ctx); err != nil {
		klog.ErrorS(err, "migration target refused", "target", s.target, "channel", ch)
		return
	}
	if _, err := tc.Write([]byte(ch + "\n")); err != nil {
		klog.ErrorS(err, "migration target refused", "target", s.target, "channel", ch)
		return
	}
	raw.SetDeadline(time.Time{})
	splice(conn, tc, func() { conn.Close(); raw.Close() })
}

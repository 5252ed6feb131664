package migrationproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every channel carries bytes both ways, and a client's half-close reaches the server while
// the server's reply still comes back; disks use several connections at once.
func TestForward(t *testing.T) {
	p := newPKI(t)
	px := newProxies(t, p, Libvirt, Memory, Disks)
	tests := []struct {
		channel string
		conns   int
	}{
		{Libvirt, 1},
		{Memory, 1},
		{Disks, 3},
	}
	for _, tt := range tests {
		t.Run(tt.channel, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, tt.conns)
			for range tt.conns {
				c := dial(t, px.entries[tt.channel])
				roundTrip(t, c, "hello "+tt.channel)
				wg.Go(func() { errs <- halfClose(c) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if n := px.echoes[tt.channel].accepted.Load(); n != int32(tt.conns) {
				t.Errorf("%d connections reached the server, want %d", n, tt.conns)
			}
		})
	}
}

// halfClose sends a payload larger than the socket buffers, closes its writing side and
// expects the payload back followed by the reply the server sends only after that EOF.
func halfClose(c *net.UnixConn) error {
	payload := make([]byte, 1<<20)
	rand.Read(payload)
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		if err == nil {
			err = c.CloseWrite()
		}
		werr <- err
	}()
	got, err := io.ReadAll(c)
	if err := <-werr; err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if want := append(payload, "bye"...); !bytes.Equal(got, want) {
		return fmt.Errorf("read %d bytes, want the %d of the payload and the reply", len(got), len(want))
	}
	return nil
}

// A connection to the target is forwarded only for a handler's certificate and a channel the
// target serves; anything else is dropped before any socket is dialled.
func TestTargetRefuses(t *testing.T) {
	p := newPKI(t)
	px := newProxies(t, p, Libvirt)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(px.target.Port()))
	noCert := clientConfig(t, p.handler)
	noCert.Certificates = nil
	tests := []struct {
		name    string
		cfg     *tls.Config
		channel string
	}{
		{"unknown channel", clientConfig(t, p.handler), "bogus"},
		{"channel the target does not serve", clientConfig(t, p.handler), Disks},
		{"overlong channel line", clientConfig(t, p.handler), string(bytes.Repeat([]byte("x"), 2*maxHeader))},
		{"virt-api's certificate", clientConfig(t, p.virtAPI), Libvirt},
		{"a handler of another CA", clientConfig(t, p.otherCA), Libvirt},
		{"no certificate", noCert, Libvirt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tls.Dialer{NetDialer: &net.Dialer{Timeout: wait}, Config: tt.cfg}
			c, err := d.Dial("tcp", addr)
			if err != nil {
				return // refused in the handshake already
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(wait))
			c.Write([]byte(tt.channel + "\nhello"))
			waitEOF(t, c)
		})
	}
	if n := px.echoes[Libvirt].accepted.Load(); n != 0 {
		t.Errorf("%d connections reached the target socket, want none", n)
	}
}

// Closing either proxy ends an idle forwarded connection at both ends at once (an aborted
// migration must not leave QEMU's NBD client waiting), removes the source sockets, and leaves
// no goroutine of the proxies behind.
func TestCloseEndsConnections(t *testing.T) {
	for _, side := range []string{"source", "target"} {
		t.Run(side, func(t *testing.T) {
			p := newPKI(t)
			px := newProxies(t, p, Libvirt, Disks)
			c := dial(t, px.entries[Disks])
			roundTrip(t, c, "hello")
			start := time.Now()
			if side == "source" {
				px.source.Close()
			} else {
				px.target.Close()
			}
			waitEOF(t, c)
			select {
			case <-px.echoes[Disks].ended:
			case <-time.After(wait):
				t.Fatal("the target socket's connection is still open")
			}
			if d := time.Since(start); d > wait/2 {
				t.Errorf("closing took %v", d)
			}
			px.source.Close()
			for ch, path := range px.entries {
				if _, err := os.Lstat(path); !os.IsNotExist(err) {
					t.Errorf("channel %s: socket file after Close: %v", ch, err)
				}
			}
			if err := px.target.Close(); err != nil {
				t.Errorf("closing twice: %v", err)
			}
			if g := proxyGoroutines(); len(g) > 0 {
				t.Errorf("goroutines outlive Close:\n%s", strings.Join(g, "\n\n"))
			}
		})
	}
}

func TestBadArguments(t *testing.T) {
	p := newPKI(t)
	dial := func(context.Context) (net.Conn, error) { return nil, errors.New("unused") }
	tests := []struct {
		name  string
		dials map[string]Dial
	}{
		{"no channel", nil},
		{"unknown channel", map[string]Dial{"bogus": dial}},
		{"nothing to dial", map[string]Dial{Libvirt: nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tg, err := NewTarget("127.0.0.1:0", serverConfig(t, p.handler), tt.dials); err == nil {
				tg.Close()
				t.Error("NewTarget accepted it")
			}
		})
	}
	if s, err := NewSource("127.0.0.1:1", clientConfig(t, p.handler), map[string]net.Listener{Memory: nil}); err == nil {
		s.Close()
		t.Error("NewSource accepted a channel without a listener")
	}
	if tg, err := NewTarget("127.0.0.1:0", clientConfig(t, p.handler), map[string]Dial{Libvirt: dial}); err == nil {
		tg.Close()
		t.Error("NewTarget accepted a configuration without client certificates")
	}
}

// proxyGoroutines are the stacks of goroutines running the proxies' own code.
func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, f := range []string{"migrationproxy.(*Source)", "migrationproxy.(*Target)", "migrationproxy.(*group)", "migrationproxy.splice"} {
			if strings.Contains(g, f) {
				found = append(found, g)
				break
			}
		}
	}
	return found
}

package migrationproxy

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmctl/vmctl/pkg/handlerapi"
	"github.com/vmctl/vmctl/virtapi/certs"
)

// wait bounds every blocking step of the tests.
const wait = 5 * time.Second

// pki is the handlers' material of one CA, as virt-api makes it, and the others a test needs.
type pki struct {
	handler, virtAPI, otherCA handlerapi.Material
}

func newPKI(t *testing.T) pki {
	t.Helper()
	now := time.Now()
	b, err := certs.Renew(certs.Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := certs.Renew(certs.Bundle{}, []string{handlerapi.ServerName}, now)
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := certs.IssueClient(b, handlerapi.ClientName, now)
	if err != nil {
		t.Fatal(err)
	}
	return pki{
		handler: handlerapi.Material{CABundle: b.CABundle, Cert: b.Cert, Key: b.Key},
		virtAPI: handlerapi.Material{CABundle: b.CABundle, Cert: cert, Key: key},
		otherCA: handlerapi.Material{CABundle: b.CABundle, Cert: other.Cert, Key: other.Key},
	}
}

func serverConfig(t *testing.T, m handlerapi.Material) *tls.Config {
	t.Helper()
	cfg, err := handlerapi.PeerServerConfig(m)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func clientConfig(t *testing.T, m handlerapi.Material) *tls.Config {
	t.Helper()
	cfg, err := handlerapi.PeerClientConfig(m)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// shortDir is a directory for unix sockets: t.TempDir() can exceed their ~100 byte limit.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// echoServer stands for the target pod's libvirtd or QEMU: it echoes what it reads and, at
// end of stream, writes "bye" and closes, so a test sees both directions and the half-close.
type echoServer struct {
	ln       net.Listener
	accepted atomic.Int32
	wg       sync.WaitGroup
	ended    chan struct{} // one value per connection whose reading side ended
}

func newEchoServer(t *testing.T, path string) *echoServer {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln, ended: make(chan struct{}, 64)}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.accepted.Add(1)
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(4 * wait))
				_, err := io.Copy(c, c)
				e.ended <- struct{}{}
				if err == nil {
					c.Write([]byte("bye"))
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		e.wg.Wait()
	})
	return e
}

// proxies is a Source and a Target joined, with an echo server behind each channel.
type proxies struct {
	source  *Source
	target  *Target
	entries map[string]string // channel -> source socket
	echoes  map[string]*echoServer
}

func newProxies(t *testing.T, p pki, channels ...string) *proxies {
	t.Helper()
	dir := shortDir(t)
	px := &proxies{entries: map[string]string{}, echoes: map[string]*echoServer{}}
	dials := map[string]Dial{}
	listeners := map[string]net.Listener{}
	for _, ch := range channels {
		backend := filepath.Join(dir, "t-"+ch)
		px.echoes[ch] = newEchoServer(t, backend)
		dials[ch] = func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", backend)
		}
		px.entries[ch] = filepath.Join(dir, "s-"+ch)
		ln, err := net.Listen("unix", px.entries[ch])
		if err != nil {
			t.Fatal(err)
		}
		listeners[ch] = ln
	}
	var err error
	px.target, err = NewTarget("127.0.0.1:0", serverConfig(t, p.handler), dials)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.target.Close() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(px.target.Port()))
	px.source, err = NewSource(addr, clientConfig(t, p.handler), listeners)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.source.Close() })
	return px
}

// dial connects to a source socket as libvirt or QEMU would.
func dial(t *testing.T, path string) *net.UnixConn {
	t.Helper()
	c, err := net.DialTimeout("unix", path, wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(4 * wait))
	return c.(*net.UnixConn)
}

// roundTrip writes msg and reads it back: the connection is through to the echo server.
func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if string(got) != msg {
		t.Fatalf("echo %q, want %q", got, msg)
	}
}

// waitEOF says whether c ends, without more data, within the bound.
func waitEOF(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err == nil {
		t.Fatalf("read %d bytes, %v; want the end of the connection", n, err)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection is still open")
	}
}

package forward

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// echoTCP serves on addr:port (port 0: any), sending back what it reads and then its name.
func echoTCP(t *testing.T, addr netip.Addr, port int, name string) int {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, uint16(port)).String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_, _ = io.Copy(conn, conn)
				_, _ = conn.Write([]byte(" from " + name))
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// forwarding starts a forwarder of one port (listening on any free port) to target and
// returns the address it listens on.
func forwarding(t *testing.T, p Port, target Target) string {
	t.Helper()
	f, err := Listen([]Port{p}, target)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); f.Serve(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if p.Protocol == UDP {
		return "127.0.0.1:" + strconv.Itoa(f.udp[0].conn.LocalAddr().(*net.UDPAddr).Port)
	}
	return "127.0.0.1:" + strconv.Itoa(f.tcp[0].ln.Addr().(*net.TCPAddr).Port)
}

// exchange sends msg, ends its sending (a half close) and reads the whole answer.
func exchange(t *testing.T, addr, msg string) (string, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(msg)); err != nil {
		return "", err
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return "", err
	}
	got, err := io.ReadAll(conn)
	return string(got), err
}

func TestTCPFollowsTheGuest(t *testing.T) {
	port := echoTCP(t, loopback, 0, "first")
	second := netip.MustParseAddr("127.0.0.2")
	echoTCP(t, second, port, "second")
	var where atomic.Pointer[netip.Addr]
	target := func() (netip.Addr, error) {
		if a := where.Load(); a != nil {
			return *a, nil
		}
		return netip.Addr{}, errors.New("no instance")
	}
	addr := forwarding(t, Port{Target: port, Protocol: TCP}, target)

	// No guest yet: the connection is closed without an answer.
	if got, _ := exchange(t, addr, "hello"); got != "" {
		t.Errorf("without a guest the forwarder answered %q", got)
	}
	where.Store(&loopback)
	if got, err := exchange(t, addr, "hello"); err != nil || got != "hello from first" {
		t.Errorf("got %q, %v; want the first guest's echo after the half close", got, err)
	}
	// The clone re-created elsewhere: new connections go to its new address.
	where.Store(&second)
	if got, err := exchange(t, addr, "again"); err != nil || got != "again from second" {
		t.Errorf("got %q, %v; want the second guest's echo", got, err)
	}
}

func TestTCPEndsConnectionsWhenServeEnds(t *testing.T) {
	port := echoTCP(t, loopback, 0, "guest")
	f, err := Listen([]Port{{Target: port, Protocol: TCP}}, func() (netip.Addr, error) { return loopback, nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); f.Serve(ctx) }()
	conn, err := net.Dial("tcp", f.tcp[0].ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := io.ReadFull(conn, buf); err != nil {
		t.Fatalf("no echo through the forwarder: %v", err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return with a connection open")
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(buf); err == nil {
		t.Errorf("the relayed connection is still open after Serve returned")
	}
}

func TestUDPRelaysRepliesToEachClient(t *testing.T) {
	guest, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(loopback, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer guest.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := guest.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			_, _ = guest.WriteToUDPAddrPort(append([]byte("re: "), buf[:n]...), from)
		}
	}()
	port := guest.LocalAddr().(*net.UDPAddr).Port
	addr := forwarding(t, Port{Target: port, Protocol: UDP}, func() (netip.Addr, error) { return loopback, nil })

	for _, msg := range []string{"one", "two"} {
		client, err := net.Dial("udp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		_ = client.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := client.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1500)
		n, err := client.Read(buf)
		if err != nil || string(buf[:n]) != "re: "+msg {
			t.Errorf("client %s got %q, %v", msg, buf[:n], err)
		}
	}
}

func TestListenNamesThePortItCannotTake(t *testing.T) {
	taken, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	_, err = Listen([]Port{{Listen: port, Target: 80, Protocol: TCP}}, nil)
	if err == nil {
		t.Fatal("Listen took a port in use")
	}
	if want := "--forward " + strconv.Itoa(port) + ":80/tcp"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}

func TestTCPClosesConnectionsBeyondTheLimit(t *testing.T) {
	port := echoTCP(t, loopback, 0, "guest")
	f, err := Listen([]Port{{Target: port, Protocol: TCP}}, func() (netip.Addr, error) { return loopback, nil })
	if err != nil {
		t.Fatal(err)
	}
	f.tcp[0].slots = make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); f.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	addr := f.tcp[0].ln.Addr().String()

	held, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	// An answer means the relay holds its slot.
	if _, err := held.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(held, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if got, _ := exchange(t, addr, "over"); got != "" {
		t.Errorf("a connection beyond the limit was relayed: %q", got)
	}
	held.Close()
	// The slot is given back once the held connection ends.
	var got string
	for range 50 {
		if got, _ = exchange(t, addr, "later"); got != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != "later from guest" {
		t.Errorf("after the held connection ended: %q", got)
	}
}

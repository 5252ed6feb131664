package podnet

import (
	"bufio"
	"context"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/vmctl/vmctl/launcher/layout"
)

// newNamespace makes an empty network namespace, or skips the test where that is not allowed
// (it needs CAP_SYS_ADMIN; the unit tests run as root in CI).
func newNamespace(t *testing.T) netns.NsHandle {
	t.Helper()
	done := make(chan netns.NsHandle, 1)
	errs := make(chan error, 1)
	go func() {
		// The thread ends with this goroutine, still locked: it stays in the new namespace.
		runtime.LockOSThread()
		ns, err := netns.New()
		if err != nil {
			errs <- err
			return
		}
		done <- ns
	}()
	select {
	case ns := <-done:
		t.Cleanup(func() { ns.Close() })
		return ns
	case err := <-errs:
		t.Skipf("no network namespace for a real check (%v)", err)
	}
	return 0
}

// podAndGuest builds the masquerade layout in two fresh namespaces: the pod's with the bridge
// and the gateway address, the guest's with the guest address on a veth enslaved to the
// bridge, and the binding's sysctls and NAT in the pod's.
func podAndGuest(t *testing.T) (pod, guest netns.NsHandle) {
	pod, guest = newNamespace(t), newNamespace(t)
	err := inNamespace(pod, func() error {
		for _, key := range []string{"net/ipv4/ip_forward", loopbackSysctl} {
			if err := os.WriteFile("/proc/sys/"+key, []byte("1"), 0o644); err != nil {
				return err
			}
		}
		lo, err := netlink.LinkByName("lo")
		if err != nil {
			return err
		}
		if err := netlink.LinkSetUp(lo); err != nil {
			return err
		}
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: layout.BridgeName}}
		if err := netlink.LinkAdd(br); err != nil {
			return err
		}
		if err := netlink.AddrAdd(br, &netlink.Addr{IPNet: layout.Gateway()}); err != nil {
			return err
		}
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "vpod", MasterIndex: br.Index}, PeerName: "vguest"}
		if err := netlink.LinkAdd(veth); err != nil {
			return err
		}
		for _, l := range []netlink.Link{br, veth} {
			if err := netlink.LinkSetUp(l); err != nil {
				return err
			}
		}
		peer, err := netlink.LinkByName("vguest")
		if err != nil {
			return err
		}
		return netlink.LinkSetNsFd(peer, int(guest))
	})
	if err != nil {
		t.Fatalf("the pod's namespace: %v", err)
	}
	err = inNamespace(guest, func() error {
		for _, name := range []string{"lo", "vguest"} {
			l, err := netlink.LinkByName(name)
			if err != nil {
				return err
			}
			if name == "vguest" {
				addr := &net.IPNet{IP: layout.GuestIP(), Mask: layout.Gateway().Mask}
				if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: addr}); err != nil {
					return err
				}
			}
			if err := netlink.LinkSetUp(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the guest's namespace: %v", err)
	}
	conn, err := nftables.New(nftables.WithNetNSFd(int(pod)))
	if err != nil {
		t.Fatal(err)
	}
	if err := testNAT().apply(conn); err != nil {
		t.Skipf("nf_tables NAT in a test namespace: %v", err)
	}
	return pod, guest
}

// listenIn opens a TCP and a UDP echo server in ns on the same free port; each answers a line
// or datagram with "<its peer's address> <what it got>".
func listenIn(t *testing.T, ns netns.NsHandle) int {
	var l net.Listener
	var pc net.PacketConn
	err := inNamespace(ns, func() error {
		var err error
		if l, err = net.Listen("tcp4", ":0"); err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp4", l.Addr().String())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(); pc.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
				_, _ = c.Write([]byte(host + " " + line))
			}()
		}
	}()
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(from.String())
			_, _ = pc.WriteTo(append([]byte(host+" "), buf[:n]...), from)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func exchange(t *testing.T, c net.Conn, msg string) string {
	t.Helper()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 200)
	n, err := c.Read(buf)
	if err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	return strings.TrimSpace(string(buf[:n]))
}

// TestGuestReachableFromThePodNamespace checks the rules in real namespaces: a connection to
// 127.0.0.1 in the pod's namespace (what `kubectl port-forward` makes) and one to the guest's
// address from a socket made there (DialGuest's) both reach the guest, TCP and UDP, coming
// from the gateway.
func TestGuestReachableFromThePodNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	pod, guest := podAndGuest(t)
	port := strconv.Itoa(listenIn(t, guest))
	gateway := layout.Gateway().IP.String()
	for _, tc := range []struct{ network, addr string }{
		{"tcp", "127.0.0.1:" + port},
		{"udp", "127.0.0.1:" + port},
		{"tcp", net.JoinHostPort(layout.GuestIP().String(), port)},
		{"udp", net.JoinHostPort(layout.GuestIP().String(), port)},
	} {
		c, err := dialIn(context.Background(), pod, tc.network, tc.addr)
		if err != nil {
			t.Errorf("%s %s: %v", tc.network, tc.addr, err)
			continue
		}
		if got, want := exchange(t, c, "hello"), gateway+" hello"; got != want {
			t.Errorf("%s %s: the guest answered %q, want %q", tc.network, tc.addr, got, want)
		}
	}
	// Outside the pod's namespace, 127.0.0.1 is not the guest.
	if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
		c.Close()
		t.Logf("something on the test host listens on %s too", port)
	}
}

package network

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/vmctl/vmctl/launcher/layout"
)

// Without virt-handler's bridge the launcher gives up after its wait, saying what is missing.
func TestServeGuestNamesTheMissingBridge(t *testing.T) {
	cfg := Config{Hostname: "vm", ResolvConf: "/nonexistent", Wait: 150 * time.Millisecond}
	start := time.Now()
	_, err := ServeGuest(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "virt-handler did not set up the pod network (bridge k6t-br0)") {
		t.Fatalf("error %v, want one naming virt-handler and the bridge", err)
	}
	if waited := time.Since(start); waited < cfg.Wait || waited > 5*time.Second {
		t.Errorf("gave up after %s, want about %s", waited, cfg.Wait)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ServeGuest(ctx, cfg); err == nil || strings.Contains(err.Error(), "did not set up") {
		t.Errorf("cancelled wait: %v, want the cancellation", err)
	}
}

// The wait ends when virt-handler brings the bridge up, not when it only creates it: the
// handler sets the bridge up last, once the tap and the NAT rules are in place. It needs no
// capability, as the launcher has none.
func TestWaitForBridgeEndsWhenTheBridgeComesUp(t *testing.T) {
	type result struct {
		link netlink.Link
		err  error
	}
	nsc, results := make(chan netns.NsHandle, 1), make(chan result, 1)
	go func() {
		// The thread ends with this goroutine, still locked: it stays in the new namespace.
		runtime.LockOSThread()
		ns, err := netns.New()
		if err != nil {
			results <- result{err: err}
			return
		}
		// Without the capabilities the launcher runs without (CAP_NET_ADMIN above all).
		if err := dropThreadCapabilities(); err != nil {
			results <- result{err: err}
			return
		}
		nsc <- ns
		link, err := waitForBridge(context.Background(), Config{Wait: time.Minute})
		results <- result{link, err}
	}()
	var ns netns.NsHandle
	select {
	case ns = <-nsc:
		defer ns.Close()
	case r := <-results:
		t.Skipf("no network namespace for a real check (%v)", r.err)
	}
	handler, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer handler.Close()

	bridge := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: layout.BridgeName}}
	if err := handler.LinkAdd(bridge); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-results:
		t.Fatalf("the wait ended on a bridge that is down: %v, %v", r.link, r.err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := handler.LinkSetUp(bridge); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-results:
		if r.err != nil || r.link.Attrs().Name != layout.BridgeName || r.link.Attrs().Flags&net.FlagUp == 0 {
			t.Fatalf("got %v, %v; want the bridge, up", r.link, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the wait did not end when the bridge came up")
	}
}

// dropThreadCapabilities empties the calling thread's effective capabilities (Linux keeps
// them per thread): the thread must stay locked to its goroutine and end with it.
func dropThreadCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	data[0].Effective, data[1].Effective = 0, 0
	return unix.Capset(&hdr, &data[0])
}

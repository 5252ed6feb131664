package podnet

import (
	"fmt"
	"net"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/vmctl/vmctl/launcher/layout"
)

// fakeBridgeLinks adds the pod interface's address and route to fakeLinks.
type fakeBridgeLinks struct {
	*fakeLinks
	addrs  []netlink.Addr
	routes []netlink.Route
}

func (f *fakeBridgeLinks) AddrList(netlink.Link, int) ([]netlink.Addr, error) { return f.addrs, nil }
func (f *fakeBridgeLinks) RouteList(netlink.Link, int) ([]netlink.Route, error) {
	return f.routes, nil
}
func (f *fakeBridgeLinks) AddrDel(l netlink.Link, a *netlink.Addr) error {
	f.calls = append(f.calls, fmt.Sprintf("deladdr %s %s", l.Attrs().Name, a.IPNet))
	return nil
}
func (f *fakeBridgeLinks) LinkSetHardwareAddr(l netlink.Link, hw net.HardwareAddr) error {
	if hw[0]&1 != 0 || hw[0]&2 == 0 {
		return fmt.Errorf("MAC %s is not local unicast", hw)
	}
	f.calls = append(f.calls, "newmac "+l.Attrs().Name)
	return nil
}

func TestBridgeBindingGivesTheGuestThePodAddress(t *testing.T) {
	mac, _ := net.ParseMAC("0a:58:0a:f4:00:07")
	eth0 := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0", MTU: 1450, Index: 2, HardwareAddr: mac}}
	podIP := &net.IPNet{IP: net.IPv4(10, 244, 0, 7).To4(), Mask: net.CIDRMask(24, 32)}
	f := &fakeBridgeLinks{fakeLinks: newFakeLinks(eth0),
		addrs:  []netlink.Addr{{IPNet: podIP}},
		routes: []netlink.Route{{Dst: podIP}, {Gw: net.IPv4(10, 244, 0, 1)}}}
	var saved layout.GuestLease
	if err := bridgeBinding(f, "eth0", 107, func(l layout.GuestLease) error { saved = l; return nil }); err != nil {
		t.Fatal(err)
	}
	want := layout.GuestLease{IP: "10.244.0.7", PrefixLen: 24, Gateway: "10.244.0.1", MAC: mac.String(), MTU: 1450}
	if saved != want {
		t.Errorf("lease %+v, want %+v", saved, want)
	}
	wantCalls := []string{"deladdr eth0 10.244.0.7/24", "newmac eth0",
		"add bridge k6t-br0 mtu 1450", "addr k6t-br0 169.254.75.10/32",
		"add tuntap tap0 mtu 1450", "mtu tap0 1450", "master tap0 k6t-br0", "up tap0", "up k6t-br0", "master eth0 k6t-br0"}
	if !slices.Equal(f.calls, wantCalls) {
		t.Errorf("calls\n%q\nwant\n%q", f.calls, wantCalls)
	}

	// A second run (a restarted handler) finds eth0 on the bridge: its address is gone and
	// the lease is not read again.
	eth0.MasterIndex = 3
	f.calls = nil
	if err := bridgeBinding(f, "eth0", 107, func(layout.GuestLease) error { t.Error("lease saved twice"); return nil }); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(f.calls, "deladdr eth0 10.244.0.7/24") {
		t.Errorf("second run took the address again: %q", f.calls)
	}
}

func TestBridgeBindingNeedsOneAddressAndAGateway(t *testing.T) {
	eth0 := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "eth0", MTU: 1500, Index: 2}}
	podIP := netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 244, 0, 7).To4(), Mask: net.CIDRMask(24, 32)}}
	for name, f := range map[string]*fakeBridgeLinks{
		"no address": {fakeLinks: newFakeLinks(eth0), routes: []netlink.Route{{Gw: net.IPv4(10, 244, 0, 1)}}},
		"no gateway": {fakeLinks: newFakeLinks(eth0), addrs: []netlink.Addr{podIP}},
	} {
		if err := bridgeBinding(f, "eth0", 107, func(layout.GuestLease) error { return nil }); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

package network

import (
	"net"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
)

var testLease = lease{
	Server:   net.IPv4(10, 0, 2, 1).To4(),
	Router:   net.IPv4(10, 0, 2, 1).To4(),
	Guest:    net.IPv4(10, 0, 2, 2).To4(),
	Mask:     net.CIDRMask(24, 32),
	DNS:      resolver{Servers: []net.IP{net.IPv4(10, 0, 0, 10).To4()}, Search: []string{"ns.svc.cluster.local"}},
	Hostname: "vm1",
	MTU:      1450,
}

func TestReply(t *testing.T) {
	mac := net.HardwareAddr{0x52, 0x54, 0, 1, 2, 3}
	msg := func(mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		m, err := dhcpv4.New(append([]dhcpv4.Modifier{dhcpv4.WithHwAddr(mac)}, mods...)...)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	typ := dhcpv4.WithMessageType
	tests := []struct {
		name string
		req  *dhcpv4.DHCPv4
		want dhcpv4.MessageType // MessageTypeNone: no reply
	}{
		{"discover", msg(typ(dhcpv4.MessageTypeDiscover)), dhcpv4.MessageTypeOffer},
		{"request after offer", msg(typ(dhcpv4.MessageTypeRequest),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(testLease.Guest)),
			dhcpv4.WithOption(dhcpv4.OptServerIdentifier(testLease.Server))), dhcpv4.MessageTypeAck},
		{"renew by ciaddr", msg(typ(dhcpv4.MessageTypeRequest), dhcpv4.WithClientIP(testLease.Guest)), dhcpv4.MessageTypeAck},
		{"init-reboot with an old address", msg(typ(dhcpv4.MessageTypeRequest),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.IPv4(192, 168, 1, 5)))), dhcpv4.MessageTypeNak},
		{"request to another server", msg(typ(dhcpv4.MessageTypeRequest),
			dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.IPv4(10, 0, 2, 99)))), dhcpv4.MessageTypeNone},
		{"release", msg(typ(dhcpv4.MessageTypeRelease)), dhcpv4.MessageTypeNone},
		{"a reply is not a request", msg(typ(dhcpv4.MessageTypeOffer), dhcpv4.WithReply(msg())), dhcpv4.MessageTypeNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := reply(tc.req, testLease)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == dhcpv4.MessageTypeNone {
				if resp != nil {
					t.Fatalf("got a %s, want no reply", resp.MessageType())
				}
				return
			}
			if resp == nil {
				t.Fatalf("no reply, want %s", tc.want)
			}
			if resp.MessageType() != tc.want {
				t.Fatalf("got %s, want %s", resp.MessageType(), tc.want)
			}
			if resp.TransactionID != tc.req.TransactionID || resp.ClientHWAddr.String() != mac.String() {
				t.Errorf("reply does not match the request: xid %v, chaddr %s", resp.TransactionID, resp.ClientHWAddr)
			}
			if !resp.ServerIdentifier().Equal(testLease.Server) {
				t.Errorf("server identifier %s", resp.ServerIdentifier())
			}
			if tc.want == dhcpv4.MessageTypeNak {
				if !resp.YourIPAddr.IsUnspecified() {
					t.Errorf("NAK offers %s", resp.YourIPAddr)
				}
				return
			}
			checkLease(t, resp)
		})
	}
}

func checkLease(t *testing.T, resp *dhcpv4.DHCPv4) {
	t.Helper()
	if !resp.YourIPAddr.Equal(testLease.Guest) {
		t.Errorf("yiaddr %s", resp.YourIPAddr)
	}
	if got := resp.SubnetMask(); got.String() != testLease.Mask.String() {
		t.Errorf("mask %s", got)
	}
	if r := resp.Router(); len(r) != 1 || !r[0].Equal(testLease.Server) {
		t.Errorf("router %v", r)
	}
	if d := resp.DNS(); len(d) != 1 || !d[0].Equal(testLease.DNS.Servers[0]) {
		t.Errorf("dns %v", d)
	}
	if s := resp.DomainSearch(); s == nil || len(s.Labels) != 1 || s.Labels[0] != "ns.svc.cluster.local" {
		t.Errorf("search %v", s)
	}
	if h := resp.HostName(); h != "vm1" {
		t.Errorf("hostname %q", h)
	}
	if lt := resp.IPAddressLeaseTime(0); lt != infiniteLease {
		t.Errorf("lease time %s", lt)
	}
	if mtu := resp.Options.Get(dhcpv4.OptionInterfaceMTU); len(mtu) != 2 || int(mtu[0])<<8|int(mtu[1]) != 1450 {
		t.Errorf("mtu option %v", mtu)
	}
}

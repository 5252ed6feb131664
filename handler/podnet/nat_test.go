package podnet

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"

	"github.com/vmctl/vmctl/launcher/layout"
)

type fakeNft struct {
	tables, flushedTables []string
	chains                []*nftables.Chain
	rules                 []*nftables.Rule
	flushed               bool
}

func (f *fakeNft) AddTable(t *nftables.Table) *nftables.Table {
	f.tables = append(f.tables, t.Name)
	return t
}
func (f *fakeNft) FlushTable(t *nftables.Table) { f.flushedTables = append(f.flushedTables, t.Name) }
func (f *fakeNft) AddChain(c *nftables.Chain) *nftables.Chain {
	f.chains = append(f.chains, c)
	return c
}
func (f *fakeNft) AddRule(r *nftables.Rule) *nftables.Rule { f.rules = append(f.rules, r); return r }
func (f *fakeNft) Flush() error                            { f.flushed = true; return nil }

// testNAT is the binding's translation with the launcher's layout.
func testNAT() nat {
	gateway := layout.Gateway()
	return nat{
		PodInterface: "eth0", Guest: layout.GuestIP(), Bridge: layout.BridgeName, Gateway: gateway.IP,
		Subnet: &net.IPNet{IP: gateway.IP.Mask(gateway.Mask), Mask: gateway.Mask},
	}
}

// ruleSummary is what a rule matches and does, read back from its expressions.
type ruleSummary struct {
	chain, iif, oif string
	daddr, saddr    net.IP // exact address matches (not the subnet's masked one)
	proto           byte
	dport           uint16 // 0: every port
	dnat, snat      net.IP
	masq            bool
}

func summarize(t *testing.T, r *nftables.Rule) ruleSummary {
	s := ruleSummary{chain: r.Chain.Name}
	var key expr.MetaKey
	var offset uint32
	masked := false
	var addr net.IP
	for _, e := range r.Exprs {
		switch e := e.(type) {
		case *expr.Meta:
			key, offset = e.Key, 0
		case *expr.Payload:
			key, offset, masked = 0, e.Offset, false
			if e.Base == expr.PayloadBaseTransportHeader {
				offset = 1000 + e.Offset // apart from the network header's offsets
			}
		case *expr.Bitwise:
			masked = true
		case *expr.Cmp:
			switch {
			case key == expr.MetaKeyIIFNAME:
				s.iif = string(bytes.TrimRight(e.Data, "\x00"))
			case key == expr.MetaKeyOIFNAME:
				s.oif = string(bytes.TrimRight(e.Data, "\x00"))
			case key == expr.MetaKeyL4PROTO:
				s.proto = e.Data[0]
			case offset == 16 && !masked:
				s.daddr = net.IP(e.Data)
			case offset == 12 && !masked:
				s.saddr = net.IP(e.Data)
			case offset == 1002:
				s.dport = binary.BigEndian.Uint16(e.Data)
			}
			key, offset = 0, 0
		case *expr.Immediate:
			addr = net.IP(e.Data)
		case *expr.NAT:
			if e.RegAddrMin != 1 || e.Family != unix.NFPROTO_IPV4 {
				t.Errorf("nat %+v", e)
			}
			if e.Type == expr.NATTypeDestNAT {
				s.dnat = addr
			} else {
				s.snat = addr
			}
		case *expr.Masq:
			s.masq = true
		}
	}
	return s
}

func TestNATApply(t *testing.T) {
	f := &fakeNft{}
	if err := testNAT().apply(f); err != nil {
		t.Fatal(err)
	}
	if !f.flushed || len(f.tables) != 1 || len(f.flushedTables) != 1 {
		t.Fatalf("want one table added, emptied and the batch sent; got %+v", f)
	}
	type hook struct {
		num      nftables.ChainHook
		priority nftables.ChainPriority
	}
	hooks := map[string]hook{}
	for _, c := range f.chains {
		if c.Type != nftables.ChainTypeNAT || c.Table.Family != nftables.TableFamilyIPv4 {
			t.Errorf("chain %s: type %s family %v", c.Name, c.Type, c.Table.Family)
		}
		hooks[c.Name] = hook{*c.Hooknum, *c.Priority}
	}
	wantHooks := map[string]hook{
		"prerouting":  {*nftables.ChainHookPrerouting, *nftables.ChainPriorityNATDest},
		"output":      {*nftables.ChainHookOutput, *nftables.ChainPriorityNATDest},
		"postrouting": {*nftables.ChainHookPostrouting, *nftables.ChainPriorityNATSource},
	}
	if len(hooks) != len(wantHooks) {
		t.Fatalf("chains %v, want %v", hooks, wantHooks)
	}
	for name, want := range wantHooks {
		if hooks[name] != want {
			t.Errorf("chain %s hooks %+v, want %+v", name, hooks[name], want)
		}
	}

	guest, gateway, lo := layout.GuestIP(), layout.Gateway().IP, net.IPv4(127, 0, 0, 1)
	want := []ruleSummary{
		{chain: "prerouting", iif: "eth0", proto: unix.IPPROTO_TCP, dnat: guest},
		{chain: "output", daddr: lo, proto: unix.IPPROTO_TCP, dnat: guest},
		{chain: "prerouting", iif: "eth0", proto: unix.IPPROTO_UDP, dnat: guest},
		{chain: "output", daddr: lo, proto: unix.IPPROTO_UDP, dnat: guest},
		{chain: "postrouting", oif: "eth0", masq: true},
		{chain: "postrouting", saddr: lo, oif: layout.BridgeName, snat: gateway},
	}
	if len(f.rules) != len(want) {
		t.Fatalf("%d rules, want %d", len(f.rules), len(want))
	}
	for i, w := range want {
		g := summarize(t, f.rules[i])
		if g.chain != w.chain || g.iif != w.iif || g.oif != w.oif || g.proto != w.proto || g.masq != w.masq ||
			!g.daddr.Equal(w.daddr) || !g.saddr.Equal(w.saddr) || !g.dnat.Equal(w.dnat) || !g.snat.Equal(w.snat) {
			t.Errorf("rule %d: %+v, want %+v", i, g, w)
		}
	}
	// The masquerade rule matches the guest subnet only.
	for _, e := range f.rules[4].Exprs {
		if c, ok := e.(*expr.Cmp); ok && len(c.Data) == 4 && !net.IP(c.Data).Equal(net.IPv4(10, 0, 2, 0)) {
			t.Errorf("source match %v", net.IP(c.Data))
		}
	}
}

func TestNATForwardsOnlyTheListedPorts(t *testing.T) {
	n := testNAT()
	n.Ports = []Port{{"TCP", 22}, {"UDP", 53}}
	f := &fakeNft{}
	if err := n.apply(f); err != nil {
		t.Fatal(err)
	}
	guest, lo := layout.GuestIP(), net.IPv4(127, 0, 0, 1)
	want := []ruleSummary{
		{chain: "prerouting", iif: "eth0", proto: unix.IPPROTO_TCP, dport: 22, dnat: guest},
		{chain: "output", daddr: lo, proto: unix.IPPROTO_TCP, dport: 22, dnat: guest},
		{chain: "prerouting", iif: "eth0", proto: unix.IPPROTO_UDP, dport: 53, dnat: guest},
		{chain: "output", daddr: lo, proto: unix.IPPROTO_UDP, dport: 53, dnat: guest},
	}
	for i, w := range want {
		if g := summarize(t, f.rules[i]); g.chain != w.chain || g.proto != w.proto || g.dport != w.dport || !g.dnat.Equal(w.dnat) {
			t.Errorf("rule %d: %+v, want %+v", i, g, w)
		}
	}
	n.Ports = []Port{{"SCTP", 1}}
	if err := n.apply(&fakeNft{}); err == nil {
		t.Error("an SCTP port was accepted")
	}
}

func TestNATNeedsTheGateway(t *testing.T) {
	n := testNAT()
	n.Gateway = nil
	if err := n.apply(&fakeNft{}); err == nil {
		t.Fatal("want an error without a gateway address")
	}
}

func TestNATRejectsIPv6(t *testing.T) {
	_, v6, _ := net.ParseCIDR("fd10::/64")
	err := (nat{PodInterface: "eth0", Guest: net.ParseIP("fd10::2"), Subnet: v6, Gateway: net.ParseIP("fd10::1")}).apply(&fakeNft{})
	if err == nil {
		t.Fatal("want an error for IPv6")
	}
}

package podnet

import (
	"bytes"
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

func TestNATApply(t *testing.T) {
	subnet := &net.IPNet{IP: net.IPv4(10, 0, 2, 0), Mask: net.CIDRMask(24, 32)}
	f := &fakeNft{}
	if err := (nat{PodInterface: "eth0", Guest: layout.GuestIP(), Subnet: subnet}).apply(f); err != nil {
		t.Fatal(err)
	}
	if !f.flushed || len(f.tables) != 1 || len(f.flushedTables) != 1 {
		t.Fatalf("want one table added, emptied and the batch sent; got %+v", f)
	}
	hooks := map[string]*nftables.ChainHook{}
	for _, c := range f.chains {
		if c.Type != nftables.ChainTypeNAT || c.Table.Family != nftables.TableFamilyIPv4 {
			t.Errorf("chain %s: type %s family %v", c.Name, c.Type, c.Table.Family)
		}
		hooks[c.Name] = c.Hooknum
	}
	if *hooks["prerouting"] != *nftables.ChainHookPrerouting || *hooks["postrouting"] != *nftables.ChainHookPostrouting {
		t.Fatalf("hooks %v", hooks)
	}

	// What each rule matches and does, read back from its expressions.
	type summary struct {
		chain, iif, oif string
		proto           byte
		dnat            net.IP
		masq            bool
	}
	var got []summary
	for _, r := range f.rules {
		s := summary{chain: r.Chain.Name}
		var key expr.MetaKey
		for _, e := range r.Exprs {
			switch e := e.(type) {
			case *expr.Meta:
				key = e.Key
			case *expr.Cmp:
				switch key {
				case expr.MetaKeyIIFNAME:
					s.iif = string(bytes.TrimRight(e.Data, "\x00"))
				case expr.MetaKeyOIFNAME:
					s.oif = string(bytes.TrimRight(e.Data, "\x00"))
				case expr.MetaKeyL4PROTO:
					s.proto = e.Data[0]
				}
				key = 0
			case *expr.Immediate:
				s.dnat = net.IP(e.Data)
			case *expr.NAT:
				if e.Type != expr.NATTypeDestNAT || e.RegAddrMin != 1 {
					t.Errorf("nat %+v", e)
				}
			case *expr.Masq:
				s.masq = true
			}
		}
		got = append(got, s)
	}
	want := []summary{
		{chain: "prerouting", iif: "eth0", proto: unix.IPPROTO_TCP, dnat: layout.GuestIP()},
		{chain: "prerouting", iif: "eth0", proto: unix.IPPROTO_UDP, dnat: layout.GuestIP()},
		{chain: "postrouting", oif: "eth0", masq: true},
	}
	if len(got) != len(want) {
		t.Fatalf("rules %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.chain != w.chain || g.iif != w.iif || g.oif != w.oif || g.proto != w.proto || !g.dnat.Equal(w.dnat) || g.masq != w.masq {
			t.Errorf("rule %d: %+v, want %+v", i, g, w)
		}
	}
	// The masquerade rule matches the guest subnet only.
	for _, e := range f.rules[2].Exprs {
		if c, ok := e.(*expr.Cmp); ok && len(c.Data) == 4 && !net.IP(c.Data).Equal(net.IPv4(10, 0, 2, 0)) {
			t.Errorf("source match %v", net.IP(c.Data))
		}
	}
}

func TestNATRejectsIPv6(t *testing.T) {
	_, v6, _ := net.ParseCIDR("fd10::/64")
	err := (nat{PodInterface: "eth0", Guest: net.ParseIP("fd10::2"), Subnet: v6}).apply(&fakeNft{})
	if err == nil {
		t.Fatal("want an error for IPv6")
	}
}

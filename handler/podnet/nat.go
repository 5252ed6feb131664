package podnet

import (
	"fmt"
	"net"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// The NAT rules go through nf_tables' netlink API (github.com/google/nftables) rather than the
// iptables binary: nothing to exec (the launcher's reaper would steal an exec'd command's
// exit status) and nothing needed from the image. The node kernel has nf_tables built in,
// and virt-handler programs the pod's namespace from the node.

// nftConn is the part of *nftables.Conn the setup uses; the batch is sent by Flush.
type nftConn interface {
	AddTable(t *nftables.Table) *nftables.Table
	FlushTable(t *nftables.Table)
	AddChain(c *nftables.Chain) *nftables.Chain
	AddRule(r *nftables.Rule) *nftables.Rule
	Flush() error
}

// natTableName is the launcher's own table in the pod's network namespace.
const natTableName = "vmctl-masquerade"

// nat is the masquerade binding's address translation:
//
//	table ip vmctl-masquerade {
//	  chain prerouting  { type nat hook prerouting priority dstnat;
//	    iifname "eth0" meta l4proto tcp dnat to 10.0.2.2
//	    iifname "eth0" meta l4proto udp dnat to 10.0.2.2 }
//	  chain postrouting { type nat hook postrouting priority srcnat;
//	    ip saddr 10.0.2.0/24 oifname "eth0" masquerade }
//	}
//
// Every TCP and UDP connection that reaches the pod IP goes to the guest: the launcher
// listens on no pod port (only on its own bridge for DHCP), so nothing needs excluding.
// Only a connection's first packet passes nat chains, so replies to the guest's own
// outbound connections are not redirected.
type nat struct {
	PodInterface string
	Guest        net.IP
	Subnet       *net.IPNet
}

// apply replaces the table's contents in one batch: a second run leaves the same rules.
func (n nat) apply(c nftConn) error {
	guest, subnet := n.Guest.To4(), n.Subnet.IP.To4()
	if guest == nil || subnet == nil || len(n.Subnet.Mask) != net.IPv4len {
		return fmt.Errorf("masquerade needs IPv4 addresses, got guest %s and subnet %s", n.Guest, n.Subnet)
	}
	t := c.AddTable(&nftables.Table{Name: natTableName, Family: nftables.TableFamilyIPv4})
	c.FlushTable(t)
	pre := c.AddChain(&nftables.Chain{
		Name: "prerouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest,
	})
	post := c.AddChain(&nftables.Chain{
		Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource,
	})
	for _, proto := range []byte{unix.IPPROTO_TCP, unix.IPPROTO_UDP} {
		c.AddRule(&nftables.Rule{Table: t, Chain: pre, Exprs: []expr.Any{
			&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(n.PodInterface)},
			&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
			&expr.Immediate{Register: 1, Data: []byte(guest)},
			&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
		}})
	}
	c.AddRule(&nftables.Rule{Table: t, Chain: post, Exprs: []expr.Any{
		// ip saddr & mask == subnet: the source address is 4 bytes at offset 12.
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte(n.Subnet.Mask), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte(subnet.Mask(n.Subnet.Mask))},
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(n.PodInterface)},
		&expr.Masq{},
	}})
	if err := c.Flush(); err != nil {
		return fmt.Errorf("nf_tables rules (needs CAP_NET_ADMIN): %w", err)
	}
	return nil
}

// ifname is an interface name as nf_tables compares it: NUL-padded to IFNAMSIZ.
func ifname(name string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return b
}

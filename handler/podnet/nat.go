package podnet

import (
	"fmt"
	"net"
	"slices"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
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
//	  chain output      { type nat hook output priority dstnat;
//	    ip daddr 127.0.0.1 meta l4proto tcp dnat to 10.0.2.2
//	    ip daddr 127.0.0.1 meta l4proto udp dnat to 10.0.2.2 }
//	  chain postrouting { type nat hook postrouting priority srcnat;
//	    ip saddr 10.0.2.0/24 oifname "eth0" masquerade
//	    ip saddr 127.0.0.1 oifname "k6t-br0" snat to 10.0.2.1 }
//	}
//
// Every TCP and UDP connection that reaches the pod IP goes to the guest (or, when the
// interface lists ports, those ports only: the others reach nothing, since the launcher
// listens on none): the launcher
// listens on no pod port (only on its own bridge for DHCP), so nothing needs excluding.
// Only a connection's first packet passes nat chains, so replies to the guest's own
// outbound connections are not redirected.
//
// The output and second postrouting rules are for `kubectl port-forward` to the launcher pod:
// the container runtime connects to 127.0.0.1:PORT inside the pod's namespace, which goes to
// the guest too, with the gateway as its source so the guest can answer. A packet with a
// loopback address may only cross the bridge with route_localnet (loopbackSysctl). Like
// KubeVirt's masquerade binding; nothing in the launcher pod connects to 127.0.0.1.
type nat struct {
	PodInterface string
	Guest        net.IP
	Subnet       *net.IPNet
	// Bridge and Gateway are the launcher's bridge and its address, the source that
	// connections from the pod's loopback reach the guest with.
	Bridge  string
	Gateway net.IP
	// Ports, when any, are the only ones forwarded to the guest (the interface's ports, as
	// KubeVirt honours them); none forwards every port.
	Ports []Port
}

// Port is a protocol ("TCP" or "UDP") and port forwarded to the guest.
type Port struct {
	Protocol string
	Port     uint16
}

// forwards are the (protocol, port) pairs the DNAT rules match; port 0 matches every port.
func (n nat) forwards() ([]Port, error) {
	if len(n.Ports) == 0 {
		return []Port{{"TCP", 0}, {"UDP", 0}}, nil
	}
	for _, p := range n.Ports {
		if p.Protocol != "TCP" && p.Protocol != "UDP" || p.Port == 0 {
			return nil, fmt.Errorf("port %s/%d: want TCP or UDP and a port from 1", p.Protocol, p.Port)
		}
	}
	return n.Ports, nil
}

var l4proto = map[string]byte{"TCP": unix.IPPROTO_TCP, "UDP": unix.IPPROTO_UDP}

// matchPort matches a forward's protocol and, unless it is 0, its destination port.
func matchPort(f Port) []expr.Any {
	m := []expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{l4proto[f.Protocol]}},
	}
	if f.Port != 0 {
		// th dport: the destination port is 2 bytes at offset 2 of the TCP or UDP header.
		m = append(m, &expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(f.Port)})
	}
	return m
}

// loopbackSysctl lets packets with 127.0.0.1 as an address cross interfaces created after it
// is set: the bridge, made after the sysctls (Setup), not the pod's eth0. The kernel drops
// them otherwise, on the way out to the guest and when the guest's answer comes back.
const loopbackSysctl = "net/ipv4/conf/default/route_localnet"

// loopback is 127.0.0.1 as nf_tables compares it.
var loopback = []byte{127, 0, 0, 1}

// apply replaces the table's contents in one batch: a second run leaves the same rules.
func (n nat) apply(c nftConn) error {
	guest, subnet, gateway := n.Guest.To4(), n.Subnet.IP.To4(), n.Gateway.To4()
	if guest == nil || subnet == nil || gateway == nil || len(n.Subnet.Mask) != net.IPv4len {
		return fmt.Errorf("masquerade needs IPv4 addresses, got guest %s, gateway %s and subnet %s", n.Guest, n.Gateway, n.Subnet)
	}
	t := c.AddTable(&nftables.Table{Name: natTableName, Family: nftables.TableFamilyIPv4})
	c.FlushTable(t)
	pre := c.AddChain(&nftables.Chain{
		Name: "prerouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest,
	})
	out := c.AddChain(&nftables.Chain{
		Name: "output", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookOutput, Priority: nftables.ChainPriorityNATDest,
	})
	post := c.AddChain(&nftables.Chain{
		Name: "postrouting", Table: t, Type: nftables.ChainTypeNAT,
		Hooknum: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource,
	})
	forwards, err := n.forwards()
	if err != nil {
		return err
	}
	for _, f := range forwards {
		dnat := []expr.Any{
			&expr.Immediate{Register: 1, Data: []byte(guest)},
			&expr.NAT{Type: expr.NATTypeDestNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
		}
		fromPod := []expr.Any{
			&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(n.PodInterface)},
		}
		c.AddRule(&nftables.Rule{Table: t, Chain: pre, Exprs: slices.Concat(fromPod, matchPort(f), dnat)})
		toLoopback := []expr.Any{
			// ip daddr == 127.0.0.1: the destination address is 4 bytes at offset 16.
			&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
			&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: loopback},
		}
		c.AddRule(&nftables.Rule{Table: t, Chain: out, Exprs: slices.Concat(toLoopback, matchPort(f), dnat)})
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
	c.AddRule(&nftables.Rule{Table: t, Chain: post, Exprs: []expr.Any{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 12, Len: 4},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: loopback},
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(n.Bridge)},
		&expr.Immediate{Register: 1, Data: []byte(gateway)},
		&expr.NAT{Type: expr.NATTypeSourceNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
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

package network

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"k8s.io/klog/v2"
)

// infiniteLease (RFC 2131: 0xffffffff) lets the guest keep its address even if it cannot
// renew, e.g. while the launcher is busy: the address is the guest's for the pod's life.
const infiniteLease = 0xffffffff * time.Second

// lease is the one lease the masquerade DHCP server hands out.
type lease struct {
	Server   net.IP // the bridge's address
	Router   net.IP // the guest's default gateway: the server for masquerade
	Guest    net.IP
	Mask     net.IPMask
	DNS      resolver
	Hostname string
	MTU      int
	Options  Options
}

// reply answers one client message; nil means no answer. The server has a single address
// to give and a single client (the guest's one NIC on the bridge), so any client gets it.
func reply(req *dhcpv4.DHCPv4, l lease) (*dhcpv4.DHCPv4, error) {
	if req.OpCode != dhcpv4.OpcodeBootRequest {
		return nil, nil
	}
	var kind dhcpv4.MessageType
	switch req.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		kind = dhcpv4.MessageTypeOffer
	case dhcpv4.MessageTypeRequest:
		// A REQUEST naming another server is the client declining our offer.
		if sid := req.ServerIdentifier(); sid != nil && !sid.Equal(l.Server) {
			return nil, nil
		}
		kind = dhcpv4.MessageTypeAck
		// SELECTING/INIT-REBOOT name the address in option 50, RENEWING/REBINDING in ciaddr.
		want := req.RequestedIPAddress()
		if want == nil && !req.ClientIPAddr.IsUnspecified() {
			want = req.ClientIPAddr
		}
		if want != nil && !want.Equal(l.Guest) {
			kind = dhcpv4.MessageTypeNak
		}
	default:
		// DECLINE, RELEASE, INFORM: nothing to do with a single fixed lease.
		return nil, nil
	}
	mods := []dhcpv4.Modifier{
		dhcpv4.WithMessageType(kind),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(l.Server)),
	}
	if kind != dhcpv4.MessageTypeNak {
		mods = append(mods,
			dhcpv4.WithYourIP(l.Guest),
			dhcpv4.WithNetmask(l.Mask),
			dhcpv4.WithRouter(l.Router),
			dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(infiniteLease)),
		)
		if len(l.DNS.Servers) > 0 {
			mods = append(mods, dhcpv4.WithDNS(l.DNS.Servers...))
		}
		if len(l.DNS.Search) > 0 {
			mods = append(mods, dhcpv4.WithDomainSearchList(l.DNS.Search...))
		}
		if l.Hostname != "" {
			mods = append(mods, dhcpv4.WithOption(dhcpv4.OptHostName(l.Hostname)))
		}
		if l.MTU >= 68 && l.MTU <= 0xffff {
			mtu := make([]byte, 2)
			binary.BigEndian.PutUint16(mtu, uint16(l.MTU))
			mods = append(mods, dhcpv4.WithGeneric(dhcpv4.OptionInterfaceMTU, mtu))
		}
		mods = append(mods, l.Options.modifiers()...)
	}
	return dhcpv4.NewReplyFromRequest(req, mods...)
}

// dhcpServer serves the lease on one interface (the bridge), so it never answers on the
// pod network. It binds UDP port 67 without capabilities, as virt-handler set the pod's
// net.ipv4.ip_unprivileged_port_start to 67.
func serveDHCP(iface string, l lease) (*server4.Server, error) {
	conn, err := server4.NewIPv4UDPConn(iface, &net.UDPAddr{Port: dhcpv4.ServerPort})
	if err != nil {
		return nil, fmt.Errorf("DHCP server on %s (port 67: net.ipv4.ip_unprivileged_port_start must be 67 or less, which virt-handler sets): %w", iface, err)
	}
	handler := func(conn net.PacketConn, peer net.Addr, req *dhcpv4.DHCPv4) {
		resp, err := reply(req, l)
		if err != nil {
			klog.ErrorS(err, "DHCP reply", "client", req.ClientHWAddr.String())
			return
		}
		if resp == nil {
			klog.V(2).InfoS("DHCP message ignored", "type", req.MessageType().String(), "client", req.ClientHWAddr.String())
			return
		}
		if _, err := conn.WriteTo(resp.ToBytes(), peer); err != nil {
			klog.ErrorS(err, "DHCP send", "client", req.ClientHWAddr.String(), "to", peer.String())
			return
		}
		klog.InfoS("DHCP", "request", req.MessageType().String(), "reply", resp.MessageType().String(),
			"client", req.ClientHWAddr.String(), "address", resp.YourIPAddr.String(), "hostname", l.Hostname)
	}
	srv, err := server4.NewServer(iface, nil, handler, server4.WithConn(conn))
	if err != nil {
		conn.Close()
		return nil, err
	}
	go func() {
		// Serve returns when the server is closed, or on a socket error; the guest then
		// keeps its infinite lease, so log rather than fail the instance.
		if err := srv.Serve(); err != nil {
			klog.V(2).InfoS("DHCP server stopped", "interface", iface, "err", err)
		}
	}()
	return srv, nil
}

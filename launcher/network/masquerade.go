// Package network plumbs a launcher pod for KubeVirt's default "masquerade" binding: the guest
// sits on a private network inside the pod, behind NAT on the pod IP.
//
//	guest NIC --- tap0 --- k6t-br0 10.0.2.1/24 ---(DNAT/MASQUERADE)--- eth0 <pod IP>
//	10.0.2.2 (DHCP from the launcher)
//
// Every TCP and UDP port of the pod IP reaches the guest, and the guest reaches the cluster
// with the pod IP as its source. QEMU attaches to tap0 itself (domain XML <interface
// type='ethernet'><target dev='tap0' managed='no'/>).
package network

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/google/nftables"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/layout"
)

// The fixed names and addresses of the binding, as KubeVirt's masquerade uses them. The
// handler must name TapDevice in the domain (handler/domain.Attachment{Mode: NetworkTap}).
const (
	BridgeName = "k6t-br0"
	TapDevice  = layout.TapDevice
)

var (
	// GatewayCIDR is the bridge's address: the guest's router and DHCP server.
	GatewayCIDR = mustCIDR("10.0.2.1/24")
	// GuestIP is the address the guest leases.
	GuestIP = net.IPv4(10, 0, 2, 2).To4()
)

// Config says how to plumb one pod.
type Config struct {
	// PodInterface is the pod's network interface, eth0 from the CNI.
	PodInterface string
	// Hostname is offered to the guest by DHCP (the VMI's name or spec.hostname).
	Hostname string
	// ResolvConf is the pod's resolver configuration, passed on to the guest.
	ResolvConf string
	// TunDevice is the tun/tap control device, created when missing.
	TunDevice string
	// IPForward is the pod network namespace's ip_forward sysctl file.
	IPForward string
}

// DefaultConfig is a launcher pod's configuration for the given hostname.
func DefaultConfig(hostname string) Config {
	return Config{
		PodInterface: "eth0",
		Hostname:     hostname,
		ResolvConf:   "/etc/resolv.conf",
		TunDevice:    "/dev/net/tun",
		IPForward:    "/proc/sys/net/ipv4/ip_forward",
	}
}

// Masquerade is the running binding; Close stops its DHCP server. The devices and rules stay:
// they go with the pod's network namespace.
type Masquerade struct {
	dhcp *server4.Server
}

// Close stops serving DHCP.
func (m *Masquerade) Close() error { return m.dhcp.Close() }

// SetupMasquerade creates the devices and NAT rules and starts the DHCP server. It needs
// CAP_NET_ADMIN (links, nf_tables), CAP_MKNOD (/dev/net/tun) and CAP_NET_BIND_SERVICE (DHCP).
func SetupMasquerade(cfg Config) (*Masquerade, error) {
	// Forwarding between the bridge and eth0 is the whole point; the pod's /proc/sys is
	// read-only, so it can only be checked (CNI plugins leave it on in the pod namespace).
	if b, err := os.ReadFile(cfg.IPForward); err == nil && strings.TrimSpace(string(b)) != "1" {
		return nil, fmt.Errorf("%s is %q in the pod's network namespace: the guest would be unreachable", cfg.IPForward, strings.TrimSpace(string(b)))
	}
	if err := ensureTun(cfg.TunDevice); err != nil {
		return nil, err
	}
	l := links{Bridge: BridgeName, Tap: TapDevice, Gateway: GatewayCIDR}
	mtu, err := l.setup(netlinkOps{}, cfg.PodInterface)
	if err != nil {
		return nil, err
	}
	subnet := &net.IPNet{IP: GatewayCIDR.IP.Mask(GatewayCIDR.Mask), Mask: GatewayCIDR.Mask}
	conn, err := nftables.New()
	if err != nil {
		return nil, fmt.Errorf("nf_tables: %w", err)
	}
	if err := (nat{PodInterface: cfg.PodInterface, Guest: GuestIP, Subnet: subnet}).apply(conn); err != nil {
		return nil, err
	}
	dns, err := readResolvConf(cfg.ResolvConf)
	if err != nil {
		// The guest can still work by address; say why names do not resolve.
		klog.ErrorS(err, "no DNS servers for the guest", "path", cfg.ResolvConf)
	}
	ls := lease{Server: GatewayCIDR.IP, Guest: GuestIP, Mask: GatewayCIDR.Mask, DNS: dns, Hostname: cfg.Hostname, MTU: mtu}
	srv, err := serveDHCP(BridgeName, ls)
	if err != nil {
		return nil, err
	}
	klog.InfoS("masquerade network ready", "podInterface", cfg.PodInterface, "bridge", BridgeName, "tap", TapDevice,
		"gateway", GatewayCIDR.String(), "guest", GuestIP.String(), "mtu", mtu, "dns", dns.Servers, "search", dns.Search)
	return &Masquerade{dhcp: srv}, nil
}

func readResolvConf(path string) (resolver, error) {
	f, err := os.Open(path)
	if err != nil {
		return resolver{}, err
	}
	defer f.Close()
	return parseResolvConf(f)
}

func mustCIDR(s string) *net.IPNet {
	ip, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	n.IP = ip.To4()
	return n
}

package podnet

import (
	"crypto/rand"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"

	"github.com/vmctl/vmctl/launcher/layout"
)

// bridgeOps is what the bridge binding needs of netlink beyond linkOps: it reads the pod
// interface's address and route and takes them away from it.
type bridgeOps interface {
	linkOps
	AddrList(link netlink.Link, family int) ([]netlink.Addr, error)
	AddrDel(link netlink.Link, addr *netlink.Addr) error
	RouteList(link netlink.Link, family int) ([]netlink.Route, error)
	LinkSetHardwareAddr(link netlink.Link, hw net.HardwareAddr) error
}

func (netlinkOps) AddrList(link netlink.Link, family int) ([]netlink.Addr, error) {
	return netlink.AddrList(link, family)
}
func (netlinkOps) AddrDel(link netlink.Link, addr *netlink.Addr) error {
	return netlink.AddrDel(link, addr)
}
func (netlinkOps) RouteList(link netlink.Link, family int) ([]netlink.Route, error) {
	return netlink.RouteList(link, family)
}
func (netlinkOps) LinkSetHardwareAddr(link netlink.Link, hw net.HardwareAddr) error {
	return netlink.LinkSetHardwareAddr(link, hw)
}

// bridgeBinding is KubeVirt's bridge binding: the pod interface joins the bridge with the
// guest's tap, and the guest takes the pod's address and MAC (by DHCP from the launcher):
//
//	guest NIC (pod MAC, pod IP) --- tap0 --- k6t-br0 169.254.75.10/32 --- eth0 (new MAC, no IP)
//
// The pod's address is read before it is taken away and handed to save, which keeps it in
// the pod (layout.GuestLeaseRel): a second run finds eth0 already on the bridge and leaves it.
func bridgeBinding(ops bridgeOps, podIface string, tapOwner uint32, save func(layout.GuestLease) error) error {
	pod, err := ops.LinkByName(podIface)
	if err != nil {
		return fmt.Errorf("pod interface %s: %w", podIface, err)
	}
	l := links{Bridge: layout.BridgeName, Tap: layout.TapDevice, Gateway: layout.BridgeDHCPServer(), TapOwner: tapOwner}
	if pod.Attrs().MasterIndex == 0 {
		lease, addr, err := podLease(ops, pod)
		if err != nil {
			return err
		}
		if err := save(lease); err != nil {
			return fmt.Errorf("keeping the pod's address for the guest: %w", err)
		}
		if err := ops.AddrDel(pod, addr); err != nil {
			return fmt.Errorf("take %s from %s: %w", addr.IPNet, podIface, err)
		}
		// The guest answers with the pod's MAC now; the pod interface needs another.
		if err := ops.LinkSetHardwareAddr(pod, randomMAC()); err != nil {
			return fmt.Errorf("new MAC for %s: %w", podIface, err)
		}
	}
	if _, err := l.setup(ops, podIface); err != nil {
		return err
	}
	br, err := ops.LinkByName(l.Bridge)
	if err != nil {
		return err
	}
	if err := ops.LinkSetMaster(pod, br); err != nil {
		return fmt.Errorf("put %s on %s: %w", podIface, l.Bridge, err)
	}
	return nil
}

// podLease is the pod interface's one IPv4 address, its default gateway, MAC and MTU.
func podLease(ops bridgeOps, pod netlink.Link) (layout.GuestLease, *netlink.Addr, error) {
	name := pod.Attrs().Name
	addrs, err := ops.AddrList(pod, netlink.FAMILY_V4)
	if err != nil {
		return layout.GuestLease{}, nil, fmt.Errorf("addresses of %s: %w", name, err)
	}
	if len(addrs) != 1 {
		return layout.GuestLease{}, nil, fmt.Errorf("the bridge binding needs exactly one IPv4 address on %s, found %d", name, len(addrs))
	}
	routes, err := ops.RouteList(pod, netlink.FAMILY_V4)
	if err != nil {
		return layout.GuestLease{}, nil, fmt.Errorf("routes of %s: %w", name, err)
	}
	var gateway net.IP
	for _, r := range routes {
		if (r.Dst == nil || r.Dst.IP.IsUnspecified()) && r.Gw != nil {
			gateway = r.Gw
		}
	}
	if gateway == nil {
		return layout.GuestLease{}, nil, fmt.Errorf("no default route through %s", name)
	}
	ones, _ := addrs[0].Mask.Size()
	lease := layout.GuestLease{IP: addrs[0].IP.String(), PrefixLen: ones, Gateway: gateway.String(),
		MAC: pod.Attrs().HardwareAddr.String(), MTU: pod.Attrs().MTU}
	return lease, &addrs[0], nil
}

// randomMAC is a locally administered unicast MAC.
func randomMAC() net.HardwareAddr {
	mac := make(net.HardwareAddr, 6)
	_, _ = rand.Read(mac)
	mac[0] = mac[0]&0xfe | 0x02
	return mac
}

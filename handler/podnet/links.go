package podnet

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
)

// linkOps is the part of netlink the masquerade setup uses, so the setup can be tested with
// a fake (the real calls need CAP_NET_ADMIN in a network namespace of one's own).
type linkOps interface {
	LinkByName(name string) (netlink.Link, error)
	LinkAdd(link netlink.Link) error
	AddrReplace(link netlink.Link, addr *netlink.Addr) error
	LinkSetMaster(link, master netlink.Link) error
	LinkSetMTU(link netlink.Link, mtu int) error
	LinkSetUp(link netlink.Link) error
}

// netlinkOps is linkOps on the process's network namespace.
type netlinkOps struct{}

func (netlinkOps) LinkByName(name string) (netlink.Link, error) { return netlink.LinkByName(name) }
func (netlinkOps) LinkAdd(link netlink.Link) error              { return netlink.LinkAdd(link) }
func (netlinkOps) AddrReplace(link netlink.Link, addr *netlink.Addr) error {
	return netlink.AddrReplace(link, addr)
}
func (netlinkOps) LinkSetMaster(link, master netlink.Link) error {
	return netlink.LinkSetMaster(link, master)
}
func (netlinkOps) LinkSetMTU(link netlink.Link, mtu int) error { return netlink.LinkSetMTU(link, mtu) }
func (netlinkOps) LinkSetUp(link netlink.Link) error           { return netlink.LinkSetUp(link) }

// links are the pod-side devices of the masquerade binding.
type links struct {
	Bridge, Tap string
	// Gateway is the bridge's address and prefix: the guest's default route.
	Gateway *net.IPNet
	// TapOwner is the uid and gid that may attach to the tap without CAP_NET_ADMIN: the
	// launcher pod's user, as whom libvirt and QEMU run.
	TapOwner uint32
}

// setup creates the bridge with the gateway address and the tap on it, both with the pod
// interface's MTU (a bigger guest MTU would make the pod drop large packets), and brings
// them up. Devices that exist already are reused, so a second run is harmless. It returns
// the MTU, which DHCP tells the guest.
func (l links) setup(ops linkOps, podIface string) (int, error) {
	pod, err := ops.LinkByName(podIface)
	if err != nil {
		return 0, fmt.Errorf("pod interface %s: %w", podIface, err)
	}
	mtu := pod.Attrs().MTU

	br, err := ensureLink(ops, &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: l.Bridge, MTU: mtu}})
	if err != nil {
		return 0, err
	}
	if err := ops.AddrReplace(br, &netlink.Addr{IPNet: l.Gateway}); err != nil {
		return 0, fmt.Errorf("address %s on %s: %w", l.Gateway, l.Bridge, err)
	}
	// A persistent tap that QEMU (libvirt, <target dev='tap0' managed='no'/>) opens later.
	// Single queue, no packet-info header; QEMU asks for the vnet header itself. Owned by
	// the pod's user, so its unprivileged QEMU may attach (TUNSETIFF checks owner and group).
	tap, err := ensureLink(ops, &netlink.Tuntap{
		LinkAttrs: netlink.LinkAttrs{Name: l.Tap, MTU: mtu},
		Mode:      netlink.TUNTAP_MODE_TAP,
		Flags:     netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR,
		Owner:     l.TapOwner,
		Group:     l.TapOwner,
	})
	if err != nil {
		return 0, err
	}
	// netlink creates a tap by ioctl, which ignores LinkAttrs.MTU.
	if err := ops.LinkSetMTU(tap, mtu); err != nil {
		return 0, fmt.Errorf("MTU %d on %s: %w", mtu, l.Tap, err)
	}
	if err := ops.LinkSetMaster(tap, br); err != nil {
		return 0, fmt.Errorf("put %s on %s: %w", l.Tap, l.Bridge, err)
	}
	for _, link := range []netlink.Link{tap, br} {
		if err := ops.LinkSetUp(link); err != nil {
			return 0, fmt.Errorf("set %s up: %w", link.Attrs().Name, err)
		}
	}
	return mtu, nil
}

// ensureLink returns the link named like want, creating it as want when there is none.
func ensureLink(ops linkOps, want netlink.Link) (netlink.Link, error) {
	name := want.Attrs().Name
	link, err := ops.LinkByName(name)
	if err == nil {
		return link, nil
	}
	var notFound netlink.LinkNotFoundError
	if !errors.As(err, &notFound) {
		return nil, fmt.Errorf("look up %s: %w", name, err)
	}
	if err := ops.LinkAdd(want); err != nil {
		return nil, fmt.Errorf("create %s %s: %w", want.Type(), name, err)
	}
	// Read it back: the index (needed to set a master) is the kernel's.
	link, err = ops.LinkByName(name)
	if err != nil {
		return nil, fmt.Errorf("look up %s after creating it: %w", name, err)
	}
	return link, nil
}

// Package network is the launcher's unprivileged part of KubeVirt's masquerade binding: once
// virt-handler has made the bridge, tap and NAT in the pod's network namespace (handler/podnet,
// docs/node.md), the launcher serves the guest's DHCP on the bridge. It needs no capability:
// the handler lowers net.ipv4.ip_unprivileged_port_start to 67 in the pod's namespace.
package network

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"

	"github.com/vmctl/vmctl/launcher/layout"
)

// Config says how to serve one guest.
type Config struct {
	// Hostname is offered to the guest by DHCP (the VMI's name or spec.hostname).
	Hostname string
	// ResolvConf is the pod's resolver configuration, passed on to the guest.
	ResolvConf string
	// Wait bounds the wait for virt-handler to plumb the pod.
	Wait time.Duration
	// LeaseFile, for the bridge binding, is the pod's address virt-handler kept for the
	// guest (layout.GuestLeaseRel); empty for masquerade.
	LeaseFile string
	// Options are the interface's extra DHCP options.
	Options Options
}

// DefaultConfig is a launcher pod's configuration for the given hostname.
func DefaultConfig(hostname string, wait time.Duration) Config {
	return Config{Hostname: hostname, ResolvConf: "/etc/resolv.conf", Wait: wait}
}

// Masquerade is the running binding; Close stops its DHCP server. The devices and rules stay:
// they go with the pod's network namespace.
type Masquerade struct {
	dhcp *server4.Server
}

// Close stops serving DHCP.
func (m *Masquerade) Close() error { return m.dhcp.Close() }

// ServeGuest waits until virt-handler has brought the bridge up, then serves the guest's
// lease on it. It fails after cfg.Wait, naming what is missing.
func ServeGuest(ctx context.Context, cfg Config) (*Masquerade, error) {
	start := time.Now()
	bridge, err := waitForBridge(ctx, cfg)
	if err != nil {
		return nil, err
	}
	dns, err := readResolvConf(cfg.ResolvConf)
	if err != nil {
		// The guest can still work by address; say why names do not resolve.
		klog.ErrorS(err, "no DNS servers for the guest", "path", cfg.ResolvConf)
	}
	// The bridge has the pod interface's MTU: a bigger guest MTU would make the pod drop
	// large packets.
	mtu := bridge.Attrs().MTU
	gateway := layout.Gateway()
	ls := lease{Server: gateway.IP, Router: gateway.IP, Guest: layout.GuestIP(), Mask: gateway.Mask, DNS: dns, Hostname: cfg.Hostname, MTU: mtu, Options: cfg.Options}
	if cfg.LeaseFile != "" {
		if ls, err = bridgeLease(cfg.LeaseFile, ls); err != nil {
			return nil, err
		}
	}
	srv, err := serveDHCP(layout.BridgeName, ls)
	if err != nil {
		return nil, err
	}
	klog.InfoS("pod network ready", "bridge", layout.BridgeName, "waited", time.Since(start).Round(time.Millisecond),
		"router", ls.Router.String(), "guest", ls.Guest.String(), "mtu", mtu, "dns", dns.Servers, "search", dns.Search)
	return &Masquerade{dhcp: srv}, nil
}

// waitForBridge waits for the bridge to be up: virt-handler brings it up last, after the
// sysctls, the tap and the NAT rules. It listens to the namespace's link notifications
// instead of polling: on a node starting many guests the handler may reach this pod only
// after minutes, and a 50 ms poll cost each launcher almost half a CPU-second by then.
func waitForBridge(ctx context.Context, cfg Config) (netlink.Link, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Wait)
	defer cancel()
	updates := make(chan netlink.LinkUpdate)
	done := make(chan struct{})
	defer func() {
		close(done)
		// The subscription closes updates once its socket is closed; until then it may be
		// sending one.
		go func() {
			for range updates {
			}
		}()
	}()
	failed := make(chan error, 1)
	// Not ListExisting: its dump request goes to the subscription's multicast address, which
	// takes CAP_NET_ADMIN (EPERM in the launcher). Subscribed first, then looked up once: a
	// bridge brought up in between is not missed.
	opts := netlink.LinkSubscribeOptions{ErrorCallback: func(err error) {
		select {
		case failed <- err:
		default:
		}
	}}
	if err := netlink.LinkSubscribeWithOptions(updates, done, opts); err != nil {
		return nil, fmt.Errorf("watching the pod's network links: %w", err)
	}
	if link, err := netlink.LinkByName(layout.BridgeName); err == nil && link.Attrs().Flags&net.FlagUp != 0 {
		return link, nil
	}
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				return nil, fmt.Errorf("watching the pod's network links: %w", <-failed)
			}
			if u.Header.Type == unix.RTM_NEWLINK && u.Link.Attrs().Name == layout.BridgeName && u.Link.Attrs().Flags&net.FlagUp != 0 {
				return u.Link, nil
			}
		case <-ctx.Done():
			if context.Cause(ctx) == context.DeadlineExceeded {
				return nil, fmt.Errorf("virt-handler did not set up the pod network (bridge %s) within %s: is virt-handler running on this node?", layout.BridgeName, cfg.Wait)
			}
			return nil, ctx.Err()
		}
	}
}

func readResolvConf(path string) (resolver, error) {
	f, err := os.Open(path)
	if err != nil {
		return resolver{}, err
	}
	defer f.Close()
	return parseResolvConf(f)
}

// bridgeLease is the bridge binding's lease: the pod's own address and gateway, served from
// the bridge's link-local address.
func bridgeLease(path string, base lease) (lease, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("the pod address virt-handler kept for the guest: %w", err)
	}
	var l layout.GuestLease
	if err := json.Unmarshal(data, &l); err != nil {
		return base, fmt.Errorf("%s: %w", path, err)
	}
	ip, router := net.ParseIP(l.IP).To4(), net.ParseIP(l.Gateway).To4()
	if ip == nil || router == nil || l.PrefixLen < 1 || l.PrefixLen > 32 {
		return base, fmt.Errorf("%s: not an IPv4 lease: %+v", path, l)
	}
	base.Server, base.Router, base.Guest, base.Mask = layout.BridgeDHCPServer().IP, router, ip, net.CIDRMask(l.PrefixLen, 32)
	return base, nil
}

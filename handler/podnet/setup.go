// Package podnet is virt-handler's part of KubeVirt's masquerade binding: it enters a launcher
// pod's network namespace from the node and makes what the pod's unprivileged user cannot
// (links and NAT need CAP_NET_ADMIN). The launcher then only serves DHCP on the bridge.
//
//	guest NIC --- tap0 --- k6t-br0 10.0.2.1/24 ---(DNAT/MASQUERADE)--- eth0 <pod IP>
//	10.0.2.2 (DHCP from the launcher)
//
// Every TCP and UDP port of the pod IP reaches the guest, and the guest reaches the cluster
// with the pod IP as its source.
package podnet

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"

	"github.com/google/nftables"
	"github.com/vishvananda/netns"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmctl/vmctl/launcher/layout"
)

// sysctls are set in the pod's namespace before the links: forwarding is the binding's whole
// point, and the launcher's DHCP server binds UDP port 67 as a user without capabilities.
var sysctls = map[string]string{
	"net/ipv4/ip_forward":                 "1",
	"net/ipv4/ip_unprivileged_port_start": "67",
	loopbackSysctl:                        "1",
}

// Setup plumbs the masquerade binding into the network namespace of process pid, which must
// belong to the pod podUID (the launcher's libvirtd, as the socket's peer credentials name it):
// a pid that is not the pod's is refused, so a pod cannot point the handler at another
// namespace. Setup is idempotent: a retried sync or a restarted handler redoes it harmlessly.
// Binding says which binding to make: bridge (the guest takes the pod's address, which save
// keeps) or masquerade (NAT, forwarding Ports, or every port when there are none).
type Binding struct {
	Bridge bool
	Ports  []Port
	Save   func(layout.GuestLease) error
}

func Setup(pid int, podUID types.UID, b Binding) error {
	if err := checkPodProcess(pid, podUID); err != nil {
		return err
	}
	ns, err := netns.GetFromPath(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return fmt.Errorf("the launcher's network namespace: %w", err)
	}
	defer ns.Close()
	return inNamespace(ns, func() error {
		for key, value := range sysctls {
			if err := os.WriteFile("/proc/sys/"+key, []byte(value), 0o644); err != nil {
				return fmt.Errorf("sysctl %s=%s in the pod: %w", strings.ReplaceAll(key, "/", "."), value, err)
			}
		}
		if b.Bridge {
			return bridgeBinding(netlinkOps{}, "eth0", layout.LauncherUID, b.Save)
		}
		// The NAT rules match interfaces by name, so they may come first: the bridge coming up
		// is the launcher's signal that everything is in place.
		conn, err := nftables.New(nftables.WithNetNSFd(int(ns)))
		if err != nil {
			return fmt.Errorf("nf_tables: %w", err)
		}
		gateway := layout.Gateway()
		subnet := &net.IPNet{IP: gateway.IP.Mask(gateway.Mask), Mask: gateway.Mask}
		if err := (nat{PodInterface: "eth0", Guest: layout.GuestIP(), Subnet: subnet, Bridge: layout.BridgeName, Gateway: gateway.IP, Ports: b.Ports}).apply(conn); err != nil {
			return err
		}
		l := links{Bridge: layout.BridgeName, Tap: layout.TapDevice, Gateway: gateway, TapOwner: layout.LauncherUID}
		_, err = l.setup(netlinkOps{}, "eth0")
		return err
	})
}

// inNamespace runs fn on an OS thread switched into ns. Netlink sockets, the tun ioctls and
// /proc/sys/net all act on the calling thread's namespace. If the thread cannot be switched
// back it stays locked, and Go ends it with the goroutine instead of reusing it.
func inNamespace(ns netns.NsHandle, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := netns.Get()
		if err != nil {
			done <- err
			return
		}
		defer home.Close()
		if err := netns.Set(ns); err != nil {
			done <- fmt.Errorf("entering the pod's network namespace: %w", err)
			return
		}
		err = fn()
		if netns.Set(home) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// checkPodProcess makes sure pid runs in the pod's cgroup: the cgroup path names the pod UID
// (cgroupfs: pod<uid>; systemd: pod<uid with underscores>.slice).
func checkPodProcess(pid int, podUID types.UID) error {
	if pid <= 0 {
		return fmt.Errorf("the launcher's libvirtd has no process ID visible to the handler (does virt-handler run with hostPID?)")
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return fmt.Errorf("the launcher's process %d: %w", pid, err)
	}
	uid := string(podUID)
	if strings.Contains(string(b), "pod"+uid) || strings.Contains(string(b), "pod"+strings.ReplaceAll(uid, "-", "_")) {
		return nil
	}
	return fmt.Errorf("process %d behind the launcher's libvirt socket is not in pod %s's cgroup", pid, uid)
}

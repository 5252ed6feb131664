package podnet

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/vishvananda/netns"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vmctl/vmctl/launcher/layout"
)

// guestDialTimeout bounds a connect to the guest: a port that neither answers nor refuses is
// firewalled inside the guest, and the user should hear so rather than wait.
const guestDialTimeout = 10 * time.Second

// DialGuest connects to port of the guest (network "tcp" or "udp") from inside the network
// namespace of process pid, which must belong to the pod podUID, as Setup checks. The socket
// is made in the pod's namespace and stays there after the thread leaves it, so the
// connection reaches the guest's address on the bridge directly: every port the guest
// listens on, without any DNAT, and without virt-handler needing a route to the pod.
func DialGuest(ctx context.Context, pid int, podUID types.UID, network string, port int) (net.Conn, error) {
	if err := checkPodProcess(pid, podUID); err != nil {
		return nil, err
	}
	ns, err := netns.GetFromPath(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, fmt.Errorf("the launcher's network namespace: %w", err)
	}
	defer ns.Close()
	return dialIn(ctx, ns, network, net.JoinHostPort(layout.GuestIP().String(), strconv.Itoa(port)))
}

// dialIn dials addr from a socket made in namespace ns.
func dialIn(ctx context.Context, ns netns.NsHandle, network, addr string) (net.Conn, error) {
	var conn net.Conn
	err := inNamespace(ns, func() error {
		var err error
		d := net.Dialer{Timeout: guestDialTimeout}
		conn, err = d.DialContext(ctx, network, addr)
		return err
	})
	return conn, err
}

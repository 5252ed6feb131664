package handlerapi

import (
	"fmt"
	"strconv"
)

// PortForwardProtocol is the websocket subprotocol of a port-forward: the raw bytes of one
// connection to the guest's port (one UDP datagram per message), the same protocol as the
// console (KubeVirt's virtctl asks for it on both).
const PortForwardProtocol = ConsoleProtocol

// The transport protocols a port-forward reaches the guest with; KubeVirt's names.
const (
	TCP = "tcp"
	UDP = "udp"
)

// PortForward is the guest port a port-forward stream connects to.
type PortForward struct {
	Port     int
	Protocol string // TCP or UDP
}

// ParsePortForward reads what follows .../portforward/ in a request path: {port} or
// {port}/{protocol}, the protocol tcp (the default) or udp. virt-api and the handler both
// check it, so a request the user's path did not name never reaches a guest.
func ParsePortForward(parts []string) (PortForward, error) {
	if len(parts) < 1 || len(parts) > 2 {
		return PortForward{}, fmt.Errorf("want portforward/{port} or portforward/{port}/{protocol}, got %d path segments", len(parts))
	}
	port, err := strconv.Atoi(parts[0])
	if err != nil || port < 1 || port > 65535 {
		return PortForward{}, fmt.Errorf("port %q: must be a number from 1 to 65535", parts[0])
	}
	pf := PortForward{Port: port, Protocol: TCP}
	if len(parts) == 2 {
		if parts[1] != TCP && parts[1] != UDP {
			return PortForward{}, fmt.Errorf("protocol %q: must be tcp or udp", parts[1])
		}
		pf.Protocol = parts[1]
	}
	return pf, nil
}

// PortForwardPath is the path of a stream to target on namespace/name's guest on a handler;
// it always names the protocol.
func PortForwardPath(namespace, name string, target PortForward) string {
	return fmt.Sprintf("/v1/namespaces/%s/virtualmachineinstances/%s/portforward/%d/%s", namespace, name, target.Port, target.Protocol)
}

// PortForwardPattern is PortForwardPath as an http.ServeMux pattern.
const PortForwardPattern = "GET /v1/namespaces/{namespace}/virtualmachineinstances/{name}/portforward/{port}/{protocol}"

// Package forward makes a vmctl pod its VM's front door: it listens on the pod's ports and
// relays TCP connections and UDP datagrams to the same or other ports of the clone's guest, so
// a Service may select the workload's own pods, `kubectl port-forward` to the pod reaches the
// guest, NetworkPolicies on the pods apply, and a container beside vmctl reaches its VM at
// localhost.
package forward

import (
	"fmt"
	"strconv"
	"strings"
)

// Protocol is a transport vmctl forwards.
type Protocol string

// The protocols a port may name after a slash; TCP when it names none.
const (
	TCP Protocol = "tcp"
	UDP Protocol = "udp"
)

// Port is one forwarded port: vmctl listens on Listen and relays to the guest's Target.
type Port struct {
	Listen   int
	Target   int
	Protocol Protocol
}

func (p Port) String() string {
	return fmt.Sprintf("%d:%d/%s", p.Listen, p.Target, p.Protocol)
}

// Ports is the --forward flag: a comma-separated list of [LISTEN:]TARGET[/tcp|/udp], as in
// `--forward 80,2222:22,5353:53/udp`. Repeating the flag adds to the list.
type Ports []Port

// Set parses one flag value and appends its ports.
func (ps *Ports) Set(value string) error {
	parsed, err := Parse(value)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range append(append([]Port{}, *ps...), parsed...) {
		key := fmt.Sprintf("%d/%s", p.Listen, p.Protocol)
		if seen[key] {
			return fmt.Errorf("port %s is listed twice", key)
		}
		seen[key] = true
	}
	*ps = append(*ps, parsed...)
	return nil
}

func (ps *Ports) String() string {
	out := make([]string, len(*ps))
	for i, p := range *ps {
		out[i] = p.String()
	}
	return strings.Join(out, ",")
}

// Type names the value in pflag's usage.
func (ps *Ports) Type() string { return "ports" }

// Parse reads a comma-separated list of [LISTEN:]TARGET[/tcp|/udp].
func Parse(spec string) ([]Port, error) {
	var ports []Port
	for entry := range strings.SplitSeq(spec, ",") {
		p, err := parsePort(strings.TrimSpace(entry))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", entry, err)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

func parsePort(entry string) (Port, error) {
	if entry == "" {
		return Port{}, fmt.Errorf("empty port (want [LISTEN:]TARGET[/tcp|/udp])")
	}
	p := Port{Protocol: TCP}
	if numbers, proto, ok := strings.Cut(entry, "/"); ok {
		switch Protocol(strings.ToLower(proto)) {
		case TCP:
		case UDP:
			p.Protocol = UDP
		default:
			return Port{}, fmt.Errorf("protocol %q is neither tcp nor udp", proto)
		}
		entry = numbers
	}
	listen, target, found := strings.Cut(entry, ":")
	if !found {
		target = listen
	}
	var err error
	if p.Listen, err = portNumber(listen, "listen port"); err != nil {
		return Port{}, err
	}
	p.Target, err = portNumber(target, "target port")
	return p, err
}

func portNumber(s, what string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("%s %q is not a number from 1 to 65535", what, s)
	}
	return n, nil
}

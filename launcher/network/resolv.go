package network

import (
	"bufio"
	"io"
	"net"
	"strings"
)

// resolver is what the guest gets from the pod's /etc/resolv.conf (which the kubelet wrote
// from the pod's dnsPolicy): the cluster DNS servers and search domains, as KubeVirt's
// masquerade DHCP gives them.
type resolver struct {
	Servers []net.IP
	Search  []string
}

// parseResolvConf reads nameserver and search lines. IPv6 servers are left out (DHCPv4 can
// only carry IPv4 ones), and so are loopback ones: 127.0.0.53 in the pod is not the guest's
// loopback.
func parseResolvConf(r io.Reader) (resolver, error) {
	var out resolver
	s := bufio.NewScanner(r)
	for s.Scan() {
		line := s.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "nameserver":
			ip := net.ParseIP(fields[1]).To4()
			if ip != nil && !ip.IsLoopback() {
				out.Servers = append(out.Servers, ip)
			}
		case "search":
			// The last search line wins, as in the C resolver.
			out.Search = append([]string(nil), fields[1:]...)
		}
	}
	return out, s.Err()
}

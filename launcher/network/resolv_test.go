package network

import (
	"net"
	"slices"
	"strings"
	"testing"
)

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantServers []string
		wantSearch  []string
	}{
		{name: "kubelet ClusterFirst",
			in:          "search ns.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.0.0.10\noptions ndots:5\n",
			wantServers: []string{"10.0.0.10"}, wantSearch: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local"}},
		{name: "IPv6 and loopback servers are left out",
			in:          "nameserver ::1\nnameserver 127.0.0.53\nnameserver fd00::10\nnameserver 10.0.0.10\nnameserver 10.0.0.11\n",
			wantServers: []string{"10.0.0.10", "10.0.0.11"}},
		{name: "comments", in: "# nameserver 1.1.1.1\nnameserver 8.8.8.8 # google\n; search x\n", wantServers: []string{"8.8.8.8"}},
		{name: "last search wins", in: "search a b\nsearch c\n", wantSearch: []string{"c"}},
		{name: "garbage", in: "nameserver\nnameserver not-an-ip\nsearch\n"},
		{name: "empty", in: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseResolvConf(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var servers []string
			for _, ip := range got.Servers {
				if len(ip) != net.IPv4len {
					t.Errorf("server %s is not in 4-byte form", ip)
				}
				servers = append(servers, ip.String())
			}
			if !slices.Equal(servers, tc.wantServers) || !slices.Equal(got.Search, tc.wantSearch) {
				t.Errorf("got servers %v search %v, want %v %v", servers, got.Search, tc.wantServers, tc.wantSearch)
			}
		})
	}
}

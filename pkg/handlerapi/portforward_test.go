package handlerapi

import "testing"

func TestParsePortForward(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  PortForward
		err   bool
	}{
		{parts: []string{"22"}, want: PortForward{22, TCP}},
		{parts: []string{"80", "tcp"}, want: PortForward{80, TCP}},
		{parts: []string{"53", "udp"}, want: PortForward{53, UDP}},
		{parts: []string{"1"}, want: PortForward{1, TCP}},
		{parts: []string{"65535", "udp"}, want: PortForward{65535, UDP}},
		{parts: nil, err: true},
		{parts: []string{"0"}, err: true},
		{parts: []string{"65536"}, err: true},
		{parts: []string{"-1"}, err: true},
		{parts: []string{"ssh"}, err: true},
		{parts: []string{"22", "sctp"}, err: true},
		{parts: []string{"22", "TCP"}, err: true},
		{parts: []string{"22", "tcp", "x"}, err: true},
	} {
		got, err := ParsePortForward(tc.parts)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v, error %v", tc.parts, got, err, tc.want, tc.err)
		}
	}
}

func TestPortForwardPathMatchesPattern(t *testing.T) {
	got := PortForwardPath("ns", "vm", PortForward{8080, UDP})
	if want := "/v1/namespaces/ns/virtualmachineinstances/vm/portforward/8080/udp"; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

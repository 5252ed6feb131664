package v1

import "testing"

func TestVCPUs(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpu  *CPU
		want uint64
	}{
		{"no cpu section", nil, 1},
		{"cores only", &CPU{Cores: 4}, 4},
		{"sockets, cores and threads", &CPU{Sockets: 2, Cores: 3, Threads: 2}, 12},
		{"a model, no topology", &CPU{Model: "Nehalem"}, 1},
	} {
		d := DomainSpec{CPU: tc.cpu}
		if got := d.VCPUs(); got != tc.want {
			t.Errorf("%s: %d vCPUs, want %d", tc.name, got, tc.want)
		}
	}
}

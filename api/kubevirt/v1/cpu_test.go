package v1

import "testing"

func TestVCPUs(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cpu      *CPU
		want     uint64
		topology CPUTopology
	}{
		{"no cpu section", nil, 1, CPUTopology{Sockets: 1, Cores: 1, Threads: 1}},
		{"cores only", &CPU{Cores: 4}, 4, CPUTopology{Sockets: 1, Cores: 4, Threads: 1}},
		{"sockets, cores and threads", &CPU{Sockets: 2, Cores: 3, Threads: 2}, 12, CPUTopology{Sockets: 2, Cores: 3, Threads: 2}},
		{"a model, no topology", &CPU{Model: "Nehalem"}, 1, CPUTopology{Sockets: 1, Cores: 1, Threads: 1}},
	} {
		d := DomainSpec{CPU: tc.cpu}
		if got := d.VCPUs(); got != tc.want {
			t.Errorf("%s: %d vCPUs, want %d", tc.name, got, tc.want)
		}
		if got := d.Topology(); got != tc.topology {
			t.Errorf("%s: topology %+v, want %+v", tc.name, got, tc.topology)
		}
	}
}

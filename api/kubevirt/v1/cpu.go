package v1

// Topology is the guest's sockets, cores and threads, each 1 when unset (0 or no cpu section),
// as KubeVirt counts them.
func (d *DomainSpec) Topology() CPUTopology {
	t := CPUTopology{Sockets: 1, Cores: 1, Threads: 1}
	if d.CPU != nil {
		t = CPUTopology{Sockets: max(d.CPU.Sockets, 1), Cores: max(d.CPU.Cores, 1), Threads: max(d.CPU.Threads, 1)}
	}
	return t
}

// VCPUs is the guest's vCPU count: sockets × cores × threads, each 1 when unset.
func (d *DomainSpec) VCPUs() uint64 {
	t := d.Topology()
	return uint64(t.Sockets) * uint64(t.Cores) * uint64(t.Threads)
}

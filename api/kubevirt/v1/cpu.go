package v1

// VCPUs is the guest's vCPU count: sockets × cores × threads, each 1 when unset.
func (d *DomainSpec) VCPUs() uint64 {
	n := uint64(1)
	if d.CPU != nil {
		for _, v := range []uint32{d.CPU.Sockets, d.CPU.Cores, d.CPU.Threads} {
			n *= uint64(max(v, 1))
		}
	}
	return n
}

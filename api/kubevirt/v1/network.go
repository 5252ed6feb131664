package v1

// HasPodInterface reports whether the guest gets a NIC on the pod network (masquerade,
// KubeVirt's default, or bridge; admission refuses the other bindings and networks). The
// launcher pod then requests /dev/net/tun and virt-handler plumbs its network namespace.
func (s *VirtualMachineInstanceSpec) HasPodInterface() bool {
	return len(s.Domain.Devices.Interfaces) > 0
}

// BridgeBound reports whether the pod interface uses the bridge binding: the guest takes the
// pod's own address, so the pod's namespace can no longer reach it.
func (s *VirtualMachineInstanceSpec) BridgeBound() bool {
	for _, iface := range s.Domain.Devices.Interfaces {
		if iface.Bridge != nil {
			return true
		}
	}
	return false
}

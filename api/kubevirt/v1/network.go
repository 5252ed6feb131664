package v1

// HasPodInterface reports whether the guest gets a NIC on the pod network through the
// masquerade binding: KubeVirt's default, so also for an interface that names no binding. The
// launcher pod then requests /dev/net/tun and virt-handler plumbs its network namespace.
func (s *VirtualMachineInstanceSpec) HasPodInterface() bool {
	for _, iface := range s.Domain.Devices.Interfaces {
		if iface.Bridge == nil {
			return true
		}
	}
	return false
}

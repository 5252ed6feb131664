package v1

// DownwardMetricsVolume says whether the instance has a downwardMetrics volume (the disk of
// host metrics).
func (s *VirtualMachineInstanceSpec) DownwardMetricsVolume() bool {
	for i := range s.Volumes {
		if s.Volumes[i].DownwardMetrics != nil {
			return true
		}
	}
	return false
}

// DownwardMetricsPort says whether the instance has the downwardMetrics device (the
// virtio-serial port of host metrics).
func (s *VirtualMachineInstanceSpec) DownwardMetricsPort() bool {
	return s.Domain.Devices.DownwardMetrics != nil
}

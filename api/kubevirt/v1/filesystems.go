package v1

// SharedVolumes are the names of the volumes the guest sees as filesystems (virtiofs), not
// as disks.
func (s *VirtualMachineInstanceSpec) SharedVolumes() map[string]bool {
	shared := map[string]bool{}
	for _, fs := range s.Domain.Devices.Filesystems {
		shared[fs.Name] = true
	}
	return shared
}

// VirtiofsVolumeKinds are the volume sources a filesystem may share, as in KubeVirt: a
// claim's file system, and the files of a configMap, secret, serviceAccount or downwardAPI.
var VirtiofsVolumeKinds = []string{"persistentVolumeClaim", "dataVolume", "configMap", "secret", "serviceAccount", "downwardAPI"}

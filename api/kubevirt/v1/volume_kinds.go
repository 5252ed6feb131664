package v1

// SourceKinds returns the JSON names of the sources a volume sets; a valid volume sets one.
func (s *VolumeSource) SourceKinds() []string {
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{
		{"containerDisk", s.ContainerDisk != nil},
		{"cloudInitNoCloud", s.CloudInitNoCloud != nil},
		{"cloudInitConfigDrive", s.CloudInitConfigDrive != nil},
		{"emptyDisk", s.EmptyDisk != nil},
		{"persistentVolumeClaim", s.PersistentVolumeClaim != nil},
		{"ephemeral", s.Ephemeral != nil},
		{"configMap", s.ConfigMap != nil},
		{"secret", s.Secret != nil},
		{"serviceAccount", s.ServiceAccount != nil},
		{"downwardAPI", s.DownwardAPI != nil},
		{"dataVolume", s.DataVolume != nil},
		{"hostDisk", s.HostDisk != nil},
		{"sysprep", s.Sysprep != nil},
		{"downwardMetrics", s.DownwardMetrics != nil},
	} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	return kinds
}

// Claim is the PVC a persistentVolumeClaim or ephemeral volume reads: the launcher pod mounts
// both the same way; an ephemeral one is written through a throwaway overlay.
func (v *Volume) Claim() (*PersistentVolumeClaimVolumeSource, bool) {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim, true
	case v.Ephemeral != nil && v.Ephemeral.PersistentVolumeClaim != nil:
		return v.Ephemeral.PersistentVolumeClaim, true
	}
	return nil, false
}

package vmi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

func TestPrivateEmptyDirIsBounded(t *testing.T) {
	emptyDisk := func(name, size string) v1.Volume {
		return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDisk: &v1.EmptyDiskSource{Capacity: resource.MustParse(size)}}}
	}
	containerDisk := v1.Volume{Name: "root", VolumeSource: v1.VolumeSource{ContainerDisk: &v1.ContainerDiskSource{Image: "disk:1"}}}
	tests := []struct {
		name    string
		volumes []v1.Volume
		cfg     PodConfig
		want    string
	}{
		{"no disks: the overhead", nil, PodConfig{}, "256Mi"},
		{"emptyDisks: their capacities", []v1.Volume{emptyDisk("a", "1Gi"), emptyDisk("b", "512Mi")}, PodConfig{}, "1792Mi"},
		{"a containerDisk: the default limit", []v1.Volume{containerDisk}, PodConfig{}, "10496Mi"},
		{"a containerDisk: the configured limit", []v1.Volume{containerDisk}, PodConfig{ContainerDiskLimit: resource.MustParse("1Gi")}, "1280Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: tt.volumes}}
			pod := RenderLauncherPod(vmi, tt.cfg)
			var got *resource.Quantity
			for _, vol := range pod.Spec.Volumes {
				if vol.Name == layout.PrivateVolume {
					got = vol.EmptyDir.SizeLimit
				}
			}
			if got == nil || got.Cmp(resource.MustParse(tt.want)) != 0 {
				t.Errorf("private emptyDir sizeLimit = %v, want %s", got, tt.want)
			}
			for _, vol := range pod.Spec.Volumes {
				if vol.EmptyDir != nil && vol.EmptyDir.SizeLimit == nil {
					t.Errorf("emptyDir %s has no sizeLimit", vol.Name)
				}
			}
			req := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage]
			if req.Cmp(PrivateOverhead) != 0 {
				t.Errorf("ephemeral-storage request = %s, want %s", req.String(), PrivateOverhead.String())
			}
		})
	}
}

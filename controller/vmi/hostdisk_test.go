package vmi

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// A hostDisk's directory is mounted where the handler and the domain look for it; DiskOrCreate lets the kubelet make the directory, Disk wants it there.
func TestLauncherPodMountsTheHostDisksDirectories(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
		{Name: "made", VolumeSource: v1.VolumeSource{HostDisk: &v1.HostDisk{Path: "/var/data/disk.img", Type: v1.HostDiskExistsOrCreate, Capacity: resource.MustParse("1Gi")}}},
		{Name: "given", VolumeSource: v1.VolumeSource{HostDisk: &v1.HostDisk{Path: "/srv/images/seed.raw", Type: v1.HostDiskExists}}},
	}}}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1"})
	want := map[string]struct {
		dir, mount string
		dirType    corev1.HostPathType
	}{
		"host-made":  {"/var/data", "/var/lib/vmctl/host-disks/made", corev1.HostPathDirectoryOrCreate},
		"host-given": {"/srv/images", "/var/lib/vmctl/host-disks/given", corev1.HostPathDirectory},
	}
	mounts := map[string]string{}
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	found := 0
	for _, vol := range pod.Spec.Volumes {
		w, ok := want[vol.Name]
		if !ok {
			continue
		}
		found++
		if hp := vol.HostPath; hp == nil || hp.Path != w.dir || hp.Type == nil || *hp.Type != w.dirType {
			t.Errorf("volume %s: %+v, want hostPath %s of type %s", vol.Name, vol.VolumeSource, w.dir, w.dirType)
		}
		if mounts[vol.Name] != w.mount {
			t.Errorf("volume %s mounted at %q in compute, want %s", vol.Name, mounts[vol.Name], w.mount)
		}
	}
	if found != len(want) {
		t.Errorf("%d of the %d hostDisk volumes in the pod: %+v", found, len(want), pod.Spec.Volumes)
	}
}

package vmi

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// Each filesystem gets its own virtiofsd sidecar, which alone mounts the shared volume, and
// listens where compute's QEMU connects.
func TestLauncherPodServesEachFilesystemFromItsOwnVirtiofsd(t *testing.T) {
	vmi := &v1.VirtualMachineInstance{Spec: v1.VirtualMachineInstanceSpec{Volumes: []v1.Volume{
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}},
		{Name: "app", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "app"}}},
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{Name: "cfg"}}},
	}}}
	vmi.Spec.Domain.Devices.Filesystems = []v1.Filesystem{{Name: "data", Virtiofs: &v1.FilesystemVirtiofs{}}, {Name: "app", Virtiofs: &v1.FilesystemVirtiofs{}}}
	pod := RenderLauncherPod(vmi, PodConfig{LauncherImage: "launcher:1", VirtiofsdImage: "virtiofsd:1"})

	for _, tc := range []struct {
		container, volume string
		readOnly          bool
	}{{"virtiofs-data", "pvc-data", false}, {"virtiofs-app", "cfg-app", true}} {
		i := slices.IndexFunc(pod.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == tc.container })
		if i < 0 {
			t.Fatalf("no container %s in %v", tc.container, pod.Spec.InitContainers)
		}
		c := pod.Spec.InitContainers[i]
		if c.Image != "virtiofsd:1" || c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Errorf("%s: image %s, restart policy %v: want virtiofsd:1 as a native sidecar", c.Name, c.Image, c.RestartPolicy)
		}
		if !slices.Contains(c.Command, "--socket-path="+layout.VirtiofsSocket(c.Name[len("virtiofs-"):])) || !slices.Contains(c.Command, "--sandbox=none") {
			t.Errorf("%s: command %v", c.Name, c.Command)
		}
		want := []corev1.VolumeMount{virtiofsSocketsMount, {Name: tc.volume, MountPath: virtiofsSharedDir, ReadOnly: tc.readOnly}}
		if !slices.Equal(c.VolumeMounts, want) {
			t.Errorf("%s: mounts %v, want %v", c.Name, c.VolumeMounts, want)
		}
	}
	mounts := pod.Spec.Containers[0].VolumeMounts
	for _, tc := range []struct {
		volume string
		want   bool
	}{{"pvc-data", false}, {"cfg-app", false}, {"cfg-cfg", true}, {layout.VirtiofsSocketsVolume, true}} {
		if got := slices.ContainsFunc(mounts, func(m corev1.VolumeMount) bool { return m.Name == tc.volume }); got != tc.want {
			t.Errorf("compute mounts %s: %v, want %v", tc.volume, got, tc.want)
		}
	}
	if !slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == layout.VirtiofsSocketsVolume && v.EmptyDir != nil }) {
		t.Errorf("no emptyDir %s for the sockets", layout.VirtiofsSocketsVolume)
	}
}

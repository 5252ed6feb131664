package vmi

import (
	"path"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// A hostDisk (admitted with virt-api's HostDisk feature gate) is a file on the node: the
// launcher pod mounts the file's directory (at layout.HostDiskDir), as KubeVirt's does, and
// virt-handler makes a DiskOrCreate image there and gives it to the launcher's
// user. The kubelet makes a DiskOrCreate's directory if it is missing. A hostPath volume is
// what Pod Security's baseline level forbids: in a namespace that enforces it the pod is
// refused, and the instance says so.

// hostDiskVolume names a hostDisk's pod volume apart from the pod's own volumes.
func hostDiskVolume(volume string) string { return "host-" + volume }

// hostDiskVolumes are the pod volumes of the instance's hostDisks.
func hostDiskVolumes(vmi *v1.VirtualMachineInstance) []corev1.Volume {
	var volumes []corev1.Volume
	for _, vol := range vmi.Spec.Volumes {
		hd := vol.HostDisk
		if hd == nil {
			continue
		}
		dirType := corev1.HostPathDirectory
		if hd.Type == v1.HostDiskExistsOrCreate {
			dirType = corev1.HostPathDirectoryOrCreate
		}
		volumes = append(volumes, corev1.Volume{Name: hostDiskVolume(vol.Name), VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: path.Dir(hd.Path), Type: &dirType}}})
	}
	return volumes
}

// hostDiskMounts put each hostDisk's directory where the handler and the domain find it.
func hostDiskMounts(vmi *v1.VirtualMachineInstance) []corev1.VolumeMount {
	var mounts []corev1.VolumeMount
	for _, vol := range vmi.Spec.Volumes {
		if vol.HostDisk != nil {
			mounts = append(mounts, corev1.VolumeMount{Name: hostDiskVolume(vol.Name), MountPath: layout.HostDiskDir(vol.Name)})
		}
	}
	return mounts
}

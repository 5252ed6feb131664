package handler

import (
	"path"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// The handler reaches a launcher pod's private emptyDir (launcher/layout) through the
// kubelet's pods directory; paths relative to it are the same on both sides.
// PrivateDir is where the handler sees the private emptyDir of the pod podUID.
func PrivateDir(kubeletRoot string, podUID types.UID) string {
	return filepath.Join(kubeletRoot, "pods", string(podUID), "volumes", "kubernetes.io~empty-dir", layout.PrivateVolume)
}

// secretVolumeDir is where the handler sees a secret volume of the pod podUID.
func secretVolumeDir(kubeletRoot string, podUID types.UID, volume string) string {
	return podVolumeDir(kubeletRoot, podUID, "kubernetes.io~secret", volume)
}

// podVolumeDir is where the kubelet sets up a pod's volume of the given plugin.
func podVolumeDir(kubeletRoot string, podUID types.UID, plugin, volume string) string {
	return filepath.Join(kubeletRoot, "pods", string(podUID), "volumes", plugin, volume)
}

// diskRel is a file of a volume, relative to the private directory.
func diskRel(volume, file string) string { return path.Join(layout.DiskRel(volume), file) }

// DomainName is the libvirt name of an instance's domain.
func DomainName(vmi *v1.VirtualMachineInstance) string {
	return layout.DomainName(vmi.Namespace, vmi.Name)
}

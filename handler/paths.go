package handler

import (
	"path"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
)

// Where things live in a launcher pod's private emptyDir (docs/node.md). Paths relative to that
// directory are the same for the launcher, which mounts it at LauncherPrivateDir, and for the
// handler, which reaches it through the kubelet's pods directory (PrivateDir).
const (
	// LauncherPrivateDir is the private emptyDir's mount point in every launcher container.
	LauncherPrivateDir = "/var/run/kubevirt-private"
	// privateVolume is the emptyDir's volume name in the launcher pod.
	privateVolume = "private"

	socketRelPath  = "libvirt/libvirt-sock"
	consoleLogRel  = "console.log"
	kernelRel      = "kernel-boot/kernel"
	initrdRel      = "kernel-boot/initrd"
	disksRel       = "vmi-disks"
	qcow2DiskFile  = "disk.qcow2"
	rawDiskFile    = "disk.raw"
	noCloudISOFile = "noCloud.iso"
	pvcDiskFile    = "disk.img"
)

// PrivateDir is where the handler sees the private emptyDir of the pod podUID.
func PrivateDir(kubeletRoot string, podUID types.UID) string {
	return filepath.Join(kubeletRoot, "pods", string(podUID), "volumes", "kubernetes.io~empty-dir", privateVolume)
}

// secretVolumeDir is where the handler sees a secret volume of the pod podUID.
func secretVolumeDir(kubeletRoot string, podUID types.UID, volume string) string {
	return filepath.Join(kubeletRoot, "pods", string(podUID), "volumes", "kubernetes.io~secret", volume)
}

// launcherPath is a path relative to the private directory as the launcher sees it.
func launcherPath(rel string) string { return path.Join(LauncherPrivateDir, rel) }

// diskRel is a file of a volume, relative to the private directory.
func diskRel(volume, file string) string { return path.Join(disksRel, volume, file) }

// DomainName is the libvirt name of an instance's domain, as handler/domain names it.
func DomainName(vmi *v1.VirtualMachineInstance) string { return vmi.Namespace + "_" + vmi.Name }

// Package layout is where things are in a launcher pod (docs/node.md): the one place the pod's
// renderer (controller/vmi), virt-launcher and virt-handler take their paths and names from.
// It has no dependencies, so the launcher binary stays small.
package layout

import "path"

const (
	// PrivateDir is the mount point of the pod's private emptyDir in every container.
	PrivateDir = "/var/run/kubevirt-private"
	// PrivateVolume is that emptyDir's volume name; the handler finds it on the node by it.
	PrivateVolume = "private"

	// Paths relative to the private directory, the same for the launcher and the handler.
	SocketRel     = "libvirt/libvirt-sock"
	ConsoleLogRel = "console.log"
	KernelRel     = "kernel-boot/kernel"
	InitrdRel     = "kernel-boot/initrd"
	disksRel      = "vmi-disks"

	// File names in a volume's disk directory.
	Qcow2DiskFile  = "disk.qcow2"
	RawDiskFile    = "disk.raw"
	NoCloudISOFile = "noCloud.iso"
	PVCDiskFile    = "disk.img"

	// TapDevice is the masquerade binding's tap: the launcher creates it, QEMU opens it.
	TapDevice = "tap0"
)

// DiskRel is a volume's disk directory, relative to the private directory.
func DiskRel(volume string) string { return path.Join(disksRel, volume) }

// InPod is a path relative to the private directory as the pod's containers see it.
func InPod(rel string) string { return path.Join(PrivateDir, rel) }

// DomainName is libvirt's name for an instance's domain.
func DomainName(namespace, name string) string { return namespace + "_" + name }

package handler

import (
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/launcher/layout"
)

// podBlockDevices are the volumes the launcher pod has as block devices (block-mode claims,
// controller/vmi/blockvolumes.go): what the pod has, not what the claims say now.
func podBlockDevices(pod *corev1.Pod) map[string]bool {
	block := map[string]bool{}
	for _, ctr := range pod.Spec.Containers {
		for _, dev := range ctr.VolumeDevices {
			if dir, volume := path.Split(dev.DevicePath); dir == layout.BlockDevicesDir+"/" {
				block[volume] = true
			}
		}
	}
	return block
}

// prepareNodeDisks gives the launcher's user the disks the node provides, as whom QEMU opens
// them, as KubeVirt's virt-handler does: each hostDisk image (made first when DiskOrCreate,
// hostdisk.go) and each block-mode claim's device node, which the container runtime makes
// root's. launcherRoot is the launcher's file system (/proc/<pid>/root of its libvirtd),
// opened only when the instance has such disks; everything goes through it as an os.Root, so
// no link leads elsewhere on the node.
func prepareNodeDisks(vmi *v1.VirtualMachineInstance, block map[string]bool, launcherRoot func() (*os.Root, error)) error {
	var root *os.Root
	for _, vol := range vmi.Spec.Volumes {
		if vol.HostDisk == nil && !block[vol.Name] {
			continue
		}
		if root == nil {
			var err error
			if root, err = launcherRoot(); err != nil {
				return fmt.Errorf("the launcher's file system: %w", err)
			}
			defer root.Close()
		}
		if vol.HostDisk != nil {
			if err := prepareHostDisk(root, vol.Name, vol.HostDisk); err != nil {
				return err
			}
			continue
		}
		if err := giveDevice(root, layout.BlockDevice(vol.Name)); err != nil {
			return fmt.Errorf("volume %q: %w", vol.Name, err)
		}
	}
	return nil
}

// giveDevice gives the launcher's user the block device at dev in the launcher's container.
// The node in the container's /dev is the container's own: the node's device is not touched.
func giveDevice(root *os.Root, dev string) error {
	rel := strings.TrimPrefix(dev, "/")
	fi, err := root.Lstat(rel)
	if err != nil {
		return fmt.Errorf("its device in the launcher pod: %w", err)
	}
	if fi.Mode().Type() != os.ModeDevice {
		return fmt.Errorf("%s in the launcher pod is not a block device (%s)", dev, fi.Mode().Type())
	}
	return launcherOwns(root, rel, fi)
}

// launcherOwns gives rel (of which fi is the Lstat) to the launcher's user, unless it has it.
func launcherOwns(root *os.Root, rel string, fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == layout.LauncherUID && st.Gid == layout.LauncherGID {
		return nil
	}
	return root.Lchown(rel, layout.LauncherUID, layout.LauncherGID)
}

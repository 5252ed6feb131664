package handler

import (
	"fmt"
	"os"
	"path"
	"strings"
	"syscall"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/launcher/layout"
)

// hostDiskImage is where the domain finds a hostDisk's image: its directory on the node is
// mounted at layout.HostDiskDir (controller/vmi/hostdisk.go).
func hostDiskImage(vol v1.Volume) domain.HostDisk {
	return domain.HostDisk{Path: path.Join(layout.HostDiskDir(vol.Name), path.Base(vol.HostDisk.Path)), Format: "raw"}
}

// prepareHostDisks makes each missing DiskOrCreate image (sparse, of its capacity) and gives
// every hostDisk image to the launcher's user, as whom QEMU opens it, as KubeVirt's
// virt-handler does: the launcher's user cannot, since the directories belong to the node.
// An image already there is never truncated or rewritten. launcherRoot is the launcher's
// file system (/proc/<pid>/root of its libvirtd), where the pod mounted the directories; each
// is opened as an os.Root, so no link in it leads elsewhere on the node.
func prepareHostDisks(vmi *v1.VirtualMachineInstance, launcherRoot func() (*os.Root, error)) error {
	var root *os.Root
	for _, vol := range vmi.Spec.Volumes {
		hd := vol.HostDisk
		if hd == nil {
			continue
		}
		if root == nil {
			var err error
			if root, err = launcherRoot(); err != nil {
				return fmt.Errorf("the launcher's file system: %w", err)
			}
			defer root.Close()
		}
		if err := prepareHostDisk(root, vol.Name, hd); err != nil {
			return err
		}
	}
	return nil
}

func prepareHostDisk(root *os.Root, volume string, hd *v1.HostDisk) error {
	dir, err := root.OpenRoot(strings.TrimPrefix(layout.HostDiskDir(volume), "/"))
	if err != nil {
		return fmt.Errorf("hostDisk %q: its directory in the launcher pod: %w", volume, err)
	}
	defer dir.Close()
	name := path.Base(hd.Path)
	exists, err := regularFile(dir, name)
	switch {
	case err != nil:
		return invalidSpec("spec.volumes: hostDisk %q: %s on the node: %v", volume, hd.Path, err)
	case !exists && hd.Type == v1.HostDiskExistsOrCreate:
		if err := ensureEmptyDisk(dir, name, hd.Capacity.Value()); err != nil {
			return fmt.Errorf("hostDisk %q: creating %s on the node: %w", volume, hd.Path, err)
		}
		return nil
	case !exists:
		return invalidSpec("spec.volumes: hostDisk %q: %s does not exist on the node (type Disk; DiskOrCreate would create it)", volume, hd.Path)
	}
	fi, err := dir.Stat(name)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == layout.LauncherUID && st.Gid == layout.LauncherGID {
		return nil
	}
	if err := dir.Lchown(name, layout.LauncherUID, layout.LauncherGID); err != nil {
		return fmt.Errorf("hostDisk %q: giving %s to the launcher's user: %w", volume, hd.Path, err)
	}
	return nil
}

// procRoot opens a process's root directory, as it sees its file system.
func procRoot(pid int) func() (*os.Root, error) {
	return func() (*os.Root, error) { return os.OpenRoot(fmt.Sprintf("/proc/%d/root", pid)) }
}

package handler

import (
	"fmt"
	"os"
	"path"
	"strings"

	v1 "github.com/vmctl/vmctl/api/kubevirt/v1"
	"github.com/vmctl/vmctl/handler/domain"
	"github.com/vmctl/vmctl/launcher/layout"
)

// hostDiskImage is where the domain finds a hostDisk's image: its directory on the node is
// mounted at layout.HostDiskDir (controller/vmi/hostdisk.go).
func hostDiskImage(vol v1.Volume) domain.HostDisk {
	return domain.HostDisk{Path: path.Join(layout.HostDiskDir(vol.Name), path.Base(vol.HostDisk.Path)), Format: "raw"}
}

// prepareHostDisk makes a missing DiskOrCreate image (sparse, of its capacity) in the hostDisk's
// directory, mounted in the launcher's file system (root), and gives the image to the
// launcher's user: the directories belong to the node. An image already there is never
// truncated or rewritten.
func prepareHostDisk(root *os.Root, volume string, hd *v1.HostDisk) error {
	dir, err := root.OpenRoot(strings.TrimPrefix(layout.HostDiskDir(volume), "/"))
	if err != nil {
		return fmt.Errorf("hostDisk %q: its directory in the launcher pod: %w", volume, err)
	}
	defer dir.Close()
	name := path.Base(hd.Path)
	fi, err := regularFileInfo(dir, name)
	switch {
	case err != nil:
		return invalidSpec("spec.volumes: hostDisk %q: %s on the node: %v", volume, hd.Path, err)
	case fi == nil && hd.Type == v1.HostDiskExistsOrCreate:
		if err := ensureEmptyDisk(dir, name, hd.Capacity.Value()); err != nil {
			return fmt.Errorf("hostDisk %q: creating %s on the node: %w", volume, hd.Path, err)
		}
		return nil
	case fi == nil:
		return invalidSpec("spec.volumes: hostDisk %q: %s does not exist on the node (type Disk; DiskOrCreate would create it)", volume, hd.Path)
	}
	if err := launcherOwns(dir, name, fi); err != nil {
		return fmt.Errorf("hostDisk %q: giving %s to the launcher's user: %w", volume, hd.Path, err)
	}
	return nil
}

// procRoot opens a process's root directory, as it sees its file system.
func procRoot(pid int) func() (*os.Root, error) {
	return func() (*os.Root, error) { return os.OpenRoot(fmt.Sprintf("/proc/%d/root", pid)) }
}

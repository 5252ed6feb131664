package main

import (
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The debian-guest image is a KubeVirt containerDisk of a small Debian 12 with cloud-init:
// the guest for tests that need a real distribution (systemd, SSH, cloud-init's NoCloud and
// ConfigDrive, the default user debian) rather than the busybox testguest. The disk boots by
// BIOS and by UEFI (hack/images/debian-guest/bootdisk.sh).
//
// Its cache key covers every file of hack/images/debian-guest (the script, the package list,
// the configuration files) and, like the launcher's base, not the mirror: editing any of them
// builds a new disk; security updates need the old entry deleted.
const (
	debianGuestDir    = "hack/images/debian-guest"
	debianGuestScript = "build-disk.sh"
	debianGuestName   = "debian-12.qcow2"
)

func init() {
	register("debian-guest", func(b *Builder) (v1.Image, error) { return b.debianGuestImage() })
}

func (b *Builder) debianGuestImage() (v1.Image, error) {
	dir := filepath.Join(b.Root, debianGuestDir)
	inputs, err := dirFiles(dir)
	if err != nil {
		return nil, err
	}
	key, err := contentKey(append(inputs, filepath.Join(b.Root, debianRootLib))...)
	if err != nil {
		return nil, err
	}
	disk := filepath.Join(b.Cache, "debian-guest", "bookworm-"+key+".qcow2")
	// Needs root and apt, 3-6 min: debootstrap, the packages, the disk.
	if err := buildCached(disk, "debian-guest disk", filepath.Join(dir, debianGuestScript), disk); err != nil {
		return nil, err
	}
	return containerDiskImage(disk, debianGuestName)
}

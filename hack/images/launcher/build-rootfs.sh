#!/usr/bin/env bash
# Builds the virt-launcher base root filesystem and packs it as a reproducible, gzipped tar:
#
#   build-rootfs.sh OUT.tar.gz PACKAGES_FILE
#
# debootstrap --variant=minbase bookworm, then the packages of PACKAGES_FILE with
# --no-install-recommends, then docs, man pages, locales, apt lists and caches removed.
# The image builder (hack/imagebuilder/rootfs.go) calls it once per cache key and keeps OUT in
# its cache; nothing here runs on a warm build. Needs root (debootstrap, chroot, mount) and
# the Debian apt repositories; installs debootstrap with apt when it is missing.
#
# The mirrors are $DEBIAN_MIRROR (bookworm, bookworm-updates) and $DEBIAN_SECURITY_MIRROR
# (bookworm-security) when set, else the ones this machine's apt sources use for bookworm and
# bookworm-security, else Debian's own; debian-mirror.sh has the rules. Both are logged.
set -euo pipefail

out=${1:?usage: build-rootfs.sh OUT.tar.gz PACKAGES_FILE}
packages_file=${2:?usage: build-rootfs.sh OUT.tar.gz PACKAGES_FILE}

log() { echo "build-rootfs: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../debian-root.sh
source "$(dirname "${BASH_SOURCE[0]}")/../debian-root.sh"

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$packages_file" | tr -d '[:blank:]')
[ "${#packages[@]}" -gt 0 ] || die "no packages in $packages_file"

debian_root_begin "$out"
debian_root_install "${packages[@]}"
debian_root_trim
# libvirtd loads every driver module it finds. The launcher uses the QEMU driver alone; the
# others look on every start for what a pod has not got (dnsmasq, the system D-Bus, udev's DMI
# data), log an error each, and cost start-up time and memory. The storage backends belong to
# the storage driver; the storage-file modules stay (the QEMU driver reads disks through them).
rm -f "$root"/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_{network,nodedev,nwfilter,interface,secret,storage}.so
rm -rf "$root"/usr/lib/x86_64-linux-gnu/libvirt/storage-backend
[ -e "$root"/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so ] ||
	die "the QEMU driver module is not where libvirtd loads it from"
# debootstrap copied the build machine's resolver into the tree; the container runtime
# provides one at run time.
: >"$root/etc/resolv.conf"

# Reproducible tar: names sorted, one mtime, numeric ownership kept. /dev, /proc and /sys stay
# empty directories: the container runtime provides them.
log "packing $out"
(
	cd "$root"
	mapfile -t top < <(find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort)
	LC_ALL=C tar --create --format=gnu --sort=name --mtime=@0 --numeric-owner \
		--anchored --exclude='dev/*' --exclude='proc/*' --exclude='sys/*' \
		--file=- "${top[@]}"
) | gzip -n -6 >"$out.tmp"
mv "$out.tmp" "$out"
log "done: $(du -h "$out" | cut -f1) compressed, $(du -sh "$root" | cut -f1) unpacked"

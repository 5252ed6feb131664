#!/usr/bin/env bash
# Builds the debian-guest disk: a small Debian 12 with cloud-init, as a qcow2 GPT disk that
# boots by BIOS and by UEFI.
#
#   build-disk.sh OUT.qcow2
#
# debootstrap --variant=minbase bookworm, then the packages of ./packages with
# --no-install-recommends, ./cloud.cfg, ./grub.cfg and ./initramfs-modules put in place, docs,
# man pages, locales, apt lists, SSH host keys and the machine-id removed. The root tree
# becomes an ext4 file system (mke2fs -d) and the disk is assembled by bootdisk.sh, without
# loop devices or mounts. The image builder (hack/imagebuilder/debianguest.go) calls it once
# per cache key; nothing here runs on a warm build. Needs root (debootstrap, chroot) and the
# Debian apt repositories; installs the tools it uses with apt when they are missing.
#
# The mirrors are the launcher's: $DEBIAN_MIRROR and $DEBIAN_SECURITY_MIRROR, else this
# machine's apt sources, else Debian's own (../launcher/debian-mirror.sh).
set -euo pipefail

out=${1:?usage: build-disk.sh OUT.qcow2}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Virtual size of the disk. qcow2 stores only what is written, so the free space costs nothing
# in the image; cloud-init grows the root file system when the VM's disk is larger.
disk_mib=2048
esp_mib=62
root_label=debian-root

log() { echo "debian-guest: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../debian-root.sh
source "$here/../debian-root.sh"
# shellcheck source-path=SCRIPTDIR source=bootdisk.sh
source "$here/bootdisk.sh"

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages" | tr -d '[:blank:]')
need=()
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v mke2fs >/dev/null || need+=(e2fsprogs)
need_tools "${need[@]}"

debian_root_begin "$out"
# Before the kernel package: its postinst builds the initramfs with these settings.
mkdir -p "$root/etc/initramfs-tools/conf.d"
echo MODULES=list >"$root/etc/initramfs-tools/conf.d/vmctl"
install -D -m 0644 "$here/initramfs-modules" "$root/etc/initramfs-tools/modules"
# The root file system by label: the same in every copy of the image, unlike a UUID of the
# build machine. No swap, no ESP mount (nothing in the guest writes to it).
printf 'LABEL=%s / ext4 defaults,errors=remount-ro 0 1\n' "$root_label" >"$root/etc/fstab"

debian_root_install "${packages[@]}"
# Units a short-lived test VM does not need: apt's daily downloads and upgrades, periodic
# file system scrubs and trims, dpkg's database backup.
in_root systemctl disable apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
	e2scrub_reap.service fstrim.timer dpkg-db-backup.timer >&2 2>/dev/null || true

install -D -m 0644 "$here/cloud.cfg" "$root/etc/cloud/cloud.cfg.d/99-vmctl.cfg"
install -D -m 0644 "$here/grub.cfg" "$root/boot/grub/grub.cfg"
# The kernel packages keep /vmlinuz and /initrd.img pointing at the newest kernel; grub.cfg
# boots those.
if [ ! -e "$root/vmlinuz" ] || [ ! -e "$root/initrd.img" ]; then
	die "no /vmlinuz or /initrd.img links in the root"
fi

debian_root_trim
# Made on first boot, so that no two VMs share them: SSH host keys (cloud-init), the
# machine-id (systemd, which treats an empty file as "first boot"), and cloud-init's state.
rm -f "$root"/etc/ssh/ssh_host_*
rm -f "$root/var/lib/dbus/machine-id"
rm -rf "$root"/var/lib/cloud/*
# resolvconf made /etc/resolv.conf a link into /run (never write through it: outside the
# chroot it is the build machine's file), and kept debootstrap's copy of the build machine's
# resolver as its "original": the guest gets its servers from DHCP or cloud-init alone.
[ -L "$root/etc/resolv.conf" ] || : >"$root/etc/resolv.conf"
rm -f "$root/etc/resolvconf/resolv.conf.d/original"

log "making the disk"
boot=$work/boot
mkdir -p "$boot"
grub_images "$boot" 3
esp_image "$boot/esp.img" "$esp_mib" EFI
esp_put "$boot/esp.img" "$boot/BOOTX64.EFI" /EFI/BOOT/BOOTX64.EFI
root_mib=$((disk_mib - 2 - esp_mib - 1))
mke2fs -q -t ext4 -L "$root_label" -d "$root" -m 1 -E nodiscard "$work/root.img" "${root_mib}M"
rm -rf "$root"
assemble_disk "$work/disk.img" "$disk_mib" "$boot/esp.img" "$work/root.img"
bios_embed "$work/disk.img" "$boot/core.img"
# Not compressed: the image layer is gzipped anyway, and QEMU reads a plain qcow2 faster.
qemu-img convert -f raw -O qcow2 "$work/disk.img" "$out.tmp"
mv "$out.tmp" "$out"
log "done: $out, $(du -h "$out" | cut -f1) on disk, ${disk_mib} MiB virtual"

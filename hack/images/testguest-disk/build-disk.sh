#!/usr/bin/env bash
# Builds the testguest-disk image: a raw GPT disk that boots the testguest's kernel and
# initramfs by BIOS and by UEFI, with GRUB.
#
#   build-disk.sh OUT.img VMLINUZ INITRD
#
# The image builder (hack/imagebuilder/diskimage.go) calls it once per cache key; nothing here
# runs on a warm build. It needs neither root nor loop devices nor mounts (see
# ../debian-guest/bootdisk.sh); root only when the tools it uses are missing and it installs
# them with apt.
set -euo pipefail

out=${1:?usage: build-disk.sh OUT.img VMLINUZ INITRD}
vmlinuz=${2:?usage: build-disk.sh OUT.img VMLINUZ INITRD}
initrd=${3:?usage: build-disk.sh OUT.img VMLINUZ INITRD}
here=$(dirname "${BASH_SOURCE[0]}")
# The whole disk: 1 MiB GPT and alignment, 1 MiB BIOS boot partition, the rest the ESP (minus
# the backup GPT at the end). The testguest's kernel and initramfs take ~15 MiB of it.
disk_mib=24
esp_mib=21

log() { echo "testguest-disk: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=../debian-guest/bootdisk.sh
source "$here/../debian-guest/bootdisk.sh"
# shellcheck disable=SC2119 # no extra packages: this disk needs only the common tools
need_tools

work=$(mktemp -d "$out.work.XXXXXX")
trap 'rm -rf "$work"' EXIT

grub_images "$work" 2
esp_image "$work/esp.img" "$esp_mib" VMCTL-TG
esp_put "$work/esp.img" "$work/BOOTX64.EFI" /EFI/BOOT/BOOTX64.EFI
esp_put "$work/esp.img" "$here/grub.cfg" /boot/grub/grub.cfg
esp_put "$work/esp.img" "$vmlinuz" /vmlinuz
esp_put "$work/esp.img" "$initrd" /initrd.img
assemble_disk "$work/disk.img" "$disk_mib" "$work/esp.img"
bios_embed "$work/disk.img" "$work/core.img"
mv "$work/disk.img" "$out"
log "done: $out ($disk_mib MiB)"

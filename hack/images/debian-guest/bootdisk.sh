# shellcheck shell=bash
# GPT disks that boot by BIOS (SeaBIOS) and by UEFI (OVMF), made without loop devices, mounts
# or root: sourced by debian-guest/build-disk.sh and testguest-disk/build-disk.sh.
#
# Layout: partition 1 a 1 MiB BIOS boot partition holding GRUB's i386-pc core image,
# partition 2 the EFI system partition (FAT, built with mtools) holding GRUB's x86_64-efi image
# as EFI/BOOT/BOOTX64.EFI (the removable-media path firmware tries without NVRAM entries), and
# optionally partition 3 an ext4 root (mke2fs -d). Both GRUB images have every module they
# need built in and look for /boot/grub/grub.cfg on one partition of the disk they were loaded
# from: "(,gptN)" means "this disk", so another disk in the VM (a cloud-init seed, a copy of
# the same image) cannot take over the boot.
#
# Why no grub-install: it maps its directories to disks through partition device nodes
# (loopNp1), which loop devices in a container do not get, and the build host may lack vfat
# (no mount of the ESP). The BIOS side of grub-install (grub-bios-setup) is a few fixed
# writes, done by bios_embed below; the EFI side is one file copy.

readonly BIOS_BOOT_TYPE=21686148-6449-6E6F-744E-656564454649 # "Hah!IdontNeedEFI"
readonly ESP_TYPE=C12A7328-F81F-11D2-BA4B-00A0C93EC93B
readonly LINUX_FS_TYPE=0FC63DAF-8483-4772-8E79-3D69D8477DE4
# Partition 1 starts at 1 MiB and is 1 MiB long; the ESP follows it.
readonly BIOS_BOOT_START=2048 BIOS_BOOT_SECTORS=2048 ESP_START=4096

# need_tools [PACKAGE...]: installs (hack/apt-install.sh, needs root) the Debian packages of
# the tools below when one is missing, plus the given packages when their commands are.
need_tools() {
	local pkgs=("$@")
	command -v grub-mkimage >/dev/null && [ -d /usr/lib/grub/i386-pc ] || pkgs+=(grub-pc-bin)
	[ -d /usr/lib/grub/x86_64-efi ] || pkgs+=(grub-efi-amd64-bin)
	command -v mkfs.fat >/dev/null || pkgs+=(dosfstools)
	command -v mcopy >/dev/null || pkgs+=(mtools)
	command -v sfdisk >/dev/null || pkgs+=(fdisk)
	[ "${#pkgs[@]}" -eq 0 ] && return 0
	log "installing ${pkgs[*]}"
	"$(dirname "${BASH_SOURCE[0]}")/../../apt-install.sh" "${pkgs[@]}" || die "cannot install ${pkgs[*]} with apt"
}

# GRUB modules built into both images: enough to read grub.cfg from FAT or ext4 on a GPT disk
# and boot Linux with an initrd, with output on the serial port too.
grub_modules=(part_gpt fat ext2 normal configfile linux echo test minicmd serial terminal)
grub_efi_modules=(efi_gop)

# grub_images DIR PART: writes DIR/core.img (i386-pc) and DIR/BOOTX64.EFI (x86_64-efi) that
# read (,gptPART)/boot/grub/grub.cfg.
grub_images() {
	local dir=$1 part=$2
	grub-mkimage -O i386-pc -o "$dir/core.img" -p "(,gpt$part)/boot/grub" \
		biosdisk "${grub_modules[@]}"
	grub-mkimage -O x86_64-efi -o "$dir/BOOTX64.EFI" -p "(,gpt$part)/boot/grub" \
		"${grub_efi_modules[@]}" "${grub_modules[@]}"
	# The BIOS boot partition holds the core image and nothing else.
	[ "$(stat -c %s "$dir/core.img")" -le $((BIOS_BOOT_SECTORS * 512)) ] ||
		die "core.img does not fit the BIOS boot partition"
}

# esp_image FILE MIB LABEL: an empty FAT file system of MIB MiB.
esp_image() {
	rm -f "$1"
	mkfs.fat -C -n "$3" "$1" $(($2 * 1024)) >/dev/null
}

# esp_put FILE SRC DEST: copies SRC to DEST (a path inside the FAT image), making directories.
esp_put() {
	local img=$1 src=$2 dest=$3 d=""
	local IFS=/
	for part in $(dirname "$dest"); do
		[ -n "$part" ] || continue
		d=$d/$part
		mmd -i "$img" -D s "::$d" 2>/dev/null || true
	done
	mcopy -i "$img" -o "$src" "::$dest"
}

# assemble_disk OUT MIB ESP_IMG [ROOT_IMG]: a raw GPT disk of MIB MiB with the partitions
# above, the file systems copied in place. The root partition takes the rest of the disk.
assemble_disk() {
	local out=$1 mib=$2 esp=$3 root=${4:-} esp_sectors
	esp_sectors=$(($(stat -c %s "$esp") / 512))
	rm -f "$out"
	truncate -s "${mib}M" "$out"
	{
		echo "label: gpt"
		echo "start=$BIOS_BOOT_START, size=$BIOS_BOOT_SECTORS, type=$BIOS_BOOT_TYPE, name=\"bios\""
		echo "start=$ESP_START, size=$esp_sectors, type=$ESP_TYPE, name=\"esp\""
		[ -z "$root" ] || echo "start=$((ESP_START + esp_sectors)), type=$LINUX_FS_TYPE, name=\"root\""
	} | sfdisk -q --no-reread --no-tell-kernel "$out"
	dd if="$esp" of="$out" bs=512 seek="$ESP_START" conv=notrunc,sparse status=none
	if [ -n "$root" ]; then
		local root_sectors
		root_sectors=$(($(stat -c %s "$root") / 512))
		[ "$((ESP_START + esp_sectors + root_sectors))" -le "$(($(stat -c %s "$out") / 512 - 34))" ] ||
			die "root file system larger than its partition"
		dd if="$root" of="$out" bs=1M seek="$(((ESP_START + esp_sectors) * 512))" oflag=seek_bytes conv=notrunc,sparse status=none
	fi
}

# le VALUE BYTES: VALUE as BYTES little-endian bytes.
le() {
	local i
	for ((i = 0; i < $2; i++)); do
		# shellcheck disable=SC2059 # the format is the byte, as an octal escape
		printf "\\$(printf %03o $((($1 >> (8 * i)) & 255)))"
	done
}

# put DISK OFFSET: writes stdin into DISK at byte OFFSET.
put() { dd of="$1" bs=1M seek="$2" oflag=seek_bytes conv=notrunc status=none; }

# bios_embed DISK CORE: what grub-bios-setup does for a GPT disk with a BIOS boot partition
# (GRUB 2.06 util/setup.c, without Reed-Solomon codes). The MBR gets GRUB's boot.img, keeping
# the protective partition table, with the sector of the core image patched in; the core image
# goes to the start of the BIOS boot partition, its first sector (diskboot.img) patched with
# where the rest of it lies.
bios_embed() {
	local disk=$1 core=$2 boot=/usr/lib/grub/i386-pc/boot.img first=$BIOS_BOOT_START sectors
	sectors=$((($(stat -c %s "$core") + 511) / 512))
	# boot.img's code around the BIOS parameter block [0x03, 0x5a), up to the disk signature.
	head -c 3 "$boot" | put "$disk" 0
	dd if="$boot" bs=1 skip=$((0x5a)) count=$((0x1b8 - 0x5a)) status=none | put "$disk" $((0x5a))
	le "$first" 8 | put "$disk" $((0x5c))  # kernel_sector: where core.img starts
	printf '\377' | put "$disk" $((0x64))  # boot_drive: 0xff, the drive the BIOS booted from
	printf '\220\220' | put "$disk" $((0x66)) # a hard disk: skip the check for a floppy drive number
	put "$disk" $((first * 512)) <"$core"
	# diskboot.img's one blocklist entry, at the end of core.img's first sector: the rest of
	# core.img (start sector, sector count, load segment 0x820).
	{ le $((first + 1)) 8; le $((sectors - 1)) 2; le $((0x820)) 2; } | put "$disk" $((first * 512 + 512 - 12))
}

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
suite=bookworm
default_mirror=http://deb.debian.org/debian
default_security_mirror=http://deb.debian.org/debian-security

log() { echo "build-rootfs: $*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source-path=SCRIPTDIR source=debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap and chroot need it)"
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$packages_file" | tr -d '[:blank:]')
[ "${#packages[@]}" -gt 0 ] || die "no packages in $packages_file"

mkdir -p "$(dirname "$out")"
# Two builders racing for the same key: the second waits and then finds the result.
exec 9>"$out.lock"
flock 9
if [ -s "$out" ]; then
	log "$out already built"
	exit 0
fi

if ! command -v debootstrap >/dev/null; then
	log "installing debootstrap"
	export DEBIAN_FRONTEND=noninteractive
	apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends debootstrap ||
		{ apt-get update && apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends debootstrap; } ||
		die "cannot install debootstrap with apt"
fi

# Work next to the output (same filesystem, so the final rename is atomic).
work=$(mktemp -d "$out.work.XXXXXX")
root=$work/root
cleanup() {
	for m in "$root/proc" "$root/sys" "$root/dev/pts"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	rm -rf "$work"
}
trap cleanup EXIT

mirror=$(debian_mirror DEBIAN_MIRROR "$suite" "$default_mirror")
security_mirror=$(debian_mirror DEBIAN_SECURITY_MIRROR "$suite-security" "$default_security_mirror")
# apt inside the new root verifies an https mirror's certificate: minbase has no CA bundle.
include=()
case "$mirror $security_mirror" in
*https://*) include=(--include=ca-certificates) ;;
esac

log "debootstrap --variant=minbase${include[*]:+ ${include[*]}} $suite $mirror"
debootstrap --variant=minbase "${include[@]}" "$suite" "$root" "$mirror" >&2 ||
	die "debootstrap failed (see $root/debootstrap/debootstrap.log)"

# Security and stable updates too: the launcher runs guests, its qemu must be patched.
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
EOF
# Never install documentation, in this build or in anything derived from the image later.
cat >"$root/etc/dpkg/dpkg.cfg.d/01-vmctl-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/lintian/*
EOF
# Maintainer scripts must not start daemons inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 0755 "$root/usr/sbin/policy-rc.d"

mount -t proc proc "$root/proc"
in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
log "apt-get install ${packages[*]}"
in_root apt-get update >&2
in_root apt-get -y dist-upgrade >&2
in_root apt-get install -y --no-install-recommends "${packages[@]}" >&2
in_root apt-get clean
umount "$root/proc"

log "trimming"
rm -f "$root/usr/sbin/policy-rc.d"
# Documentation of the base packages, installed before the exclusions above existed.
find "$root/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$root"/usr/share/{man,info,lintian}/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/* "$root"/var/cache/debconf/*-old \
	"$root"/var/lib/dpkg/*-old "$root"/var/cache/ldconfig/aux-cache "$root"/tmp/* "$root"/var/tmp/* \
	"$root/debootstrap"
# Leftovers of the build's own processes; /run/lock stays, as packages expect it.
find "$root/run" -mindepth 1 -maxdepth 1 ! -name lock -exec rm -rf {} +
# Logs of this build say nothing about a running container: keep the directories, drop the files.
find "$root/var/log" -type f -delete
# An empty machine-id, as systemd-less images ship it. debootstrap copied the build machine's
# hostname and resolver into the tree; the container runtime provides both at run time.
: >"$root/etc/machine-id"
: >"$root/etc/resolv.conf"
echo localhost >"$root/etc/hostname"

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

# shellcheck shell=bash
# debian-root.sh: the steps the launcher base (launcher/build-rootfs.sh) and the Debian guest
# disk (debian-guest/build-disk.sh) share, sourced by both after they define log and die. Both
# image builders key their caches on this file.
#
#   debian_root_begin OUT   take OUT's lock (exit 0 if another build made OUT meanwhile),
#                           make $work and $root next to OUT (removed on exit), debootstrap
#                           minbase into $root from the mirrors, with apt sources, no docs and
#                           no daemons started by maintainer scripts
#   in_root CMD...          run CMD in $root
#   debian_root_install P.. apt-get update, dist-upgrade and install P (no recommends) in $root
#   debian_root_trim        drop docs, apt lists and caches, logs, the build's runtime files,
#                           the machine-id and the build machine's hostname

suite=bookworm
default_mirror=http://deb.debian.org/debian
default_security_mirror=http://deb.debian.org/debian-security

# shellcheck source-path=SCRIPTDIR source=launcher/debian-mirror.sh
source "$(dirname "${BASH_SOURCE[0]}")/launcher/debian-mirror.sh"

debian_root_begin() {
	local out=$1
	if ! command -v debootstrap >/dev/null; then
		log "installing debootstrap"
		"$(dirname "${BASH_SOURCE[0]}")/../apt-install.sh" debootstrap || die "cannot install debootstrap with apt"
	fi
	mkdir -p "$(dirname "$out")"
	# Two builders racing for the same key: the second waits and then finds the result.
	exec 9>"$out.lock"
	flock 9
	if [ -s "$out" ]; then
		log "$out already built"
		exit 0
	fi
	# Work next to the output (same file system, so the final rename is atomic).
	work=$(mktemp -d "$out.work.XXXXXX")
	root=$work/root
	trap debian_root_cleanup EXIT

	local mirror security_mirror include=()
	mirror=$(debian_mirror DEBIAN_MIRROR "$suite" "$default_mirror")
	security_mirror=$(debian_mirror DEBIAN_SECURITY_MIRROR "$suite-security" "$default_security_mirror")
	# apt inside the new root verifies an https mirror's certificate: minbase has no CA bundle.
	case "$mirror $security_mirror" in
	*https://*) include=(--include=ca-certificates) ;;
	esac
	log "debootstrap --variant=minbase${include[*]:+ ${include[*]}} $suite $mirror"
	debootstrap --variant=minbase "${include[@]}" "$suite" "$root" "$mirror" >&2 ||
		die "debootstrap failed (see $root/debootstrap/debootstrap.log)"
	# Security and stable updates too: what runs guests, and the guests, must be patched.
	cat >"$root/etc/apt/sources.list" <<-EOS
		deb $mirror $suite main
		deb $mirror $suite-updates main
		deb $security_mirror $suite-security main
	EOS
	# Never install documentation, in this build or in anything derived from the tree later.
	cat >"$root/etc/dpkg/dpkg.cfg.d/01-vmctl-nodoc" <<-'EOS'
		path-exclude=/usr/share/doc/*
		path-include=/usr/share/doc/*/copyright
		path-exclude=/usr/share/man/*
		path-exclude=/usr/share/info/*
		path-exclude=/usr/share/locale/*
		path-include=/usr/share/locale/locale.alias
		path-exclude=/usr/share/lintian/*
	EOS
	# Maintainer scripts must not start daemons inside the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 0755 "$root/usr/sbin/policy-rc.d"
}

debian_root_cleanup() {
	local m
	for m in "$root/proc" "$root/sys" "$root/dev/pts"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	rm -rf "$work"
}

in_root() { chroot "$root" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }

debian_root_install() {
	mount -t proc proc "$root/proc"
	log "apt-get install $*"
	in_root apt-get update >&2
	in_root apt-get -y dist-upgrade >&2
	in_root apt-get install -y --no-install-recommends "$@" >&2
	in_root apt-get clean
}

debian_root_trim() {
	mountpoint -q "$root/proc" && umount "$root/proc"
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
	# Logs of this build say nothing about a running system: keep the directories.
	find "$root/var/log" -type f -delete
	# An empty machine-id: systemd makes one on first boot, so no two systems share it.
	: >"$root/etc/machine-id"
	echo localhost >"$root/etc/hostname"
}

# shellcheck shell=bash
# Which Debian mirror to build from: sourced by build-rootfs.sh, which defines log.
#
#   debian_mirror VARIABLE SUITE DEFAULT
#
# prints the mirror (URI) for SUITE's main component and logs where it came from:
#   1. the environment variable VARIABLE (DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR), when set;
#   2. else the first http(s) source of this machine's apt configuration serving SUITE main;
#   3. else DEFAULT, Debian's own mirror.
# apt itself reads the sources (one-line and deb822 files, disabled entries, $APT_CONFIG):
# `apt-get update --print-uris` lists the index files it would fetch, without the network.

debian_mirror() {
	local var=$1 suite=$2 default=$3 uri
	if [ -n "${!var:-}" ]; then
		log "$suite mirror: ${!var%/} (from \$$var)"
		printf '%s\n' "${!var%/}"
		return 0
	fi
	uri=$(apt-get update --print-uris -o Debug::NoLocking=1 2>/dev/null |
		sed -n "s,^'\(https\?://[^']*\)/dists/$suite/main/binary-[^']*'.*,\1,p" | head -n 1 || true)
	if [ -n "$uri" ]; then
		log "$suite mirror: ${uri%/} (from this machine's apt sources)"
		printf '%s\n' "${uri%/}"
		return 0
	fi
	log "$suite mirror: $default (Debian's default: no apt source of this machine serves $suite main over http(s) and \$$var is not set)"
	printf '%s\n' "$default"
}

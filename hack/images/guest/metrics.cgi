#!/bin/sh
# /www/cgi-bin/metrics in the testguest: KubeVirt's downward metrics as a guest tool reads them.
# `curl http://GUEST/cgi-bin/metrics?port` asks on the virtio-serial port org.github.vhostmd.1
# ("GET /metrics/XML" and a blank line) and prints the answer; `?disk` finds the disk whose
# first bytes are vhostmd's signature "mvbd" and prints its header's length field and its
# XML, read past the guest's page cache so a rewrite by the host is seen. Header and XML come
# from one read, taken again while the header's busy flag says the host is rewriting them.
echo "Content-Type: text/plain"
echo

# field OFFSET is the big-endian 32-bit number at OFFSET in /tmp/metrics.
field() {
	dd if=/tmp/metrics bs=1 skip="$1" count=4 2>/dev/null | od -An -tu1 | awk '{print $1*16777216+$2*65536+$3*256+$4}'
}
case "$QUERY_STRING" in
port)
	for p in /sys/class/virtio-ports/*; do
		[ "$(cat "$p/name" 2>/dev/null)" = org.github.vhostmd.1 ] || continue
		exec 3<>"/dev/${p##*/}"
		printf 'GET /metrics/XML\n\n' >&3
		# shellcheck disable=SC3045 # busybox's sh has read -t: a launcher that never answers
		while IFS= read -r -t 10 line <&3; do
			echo "$line"
			[ "$line" = "</metrics>" ] && break
		done
		exit
	done
	echo "no port org.github.vhostmd.1"
	;;
disk)
	echo 3 >/proc/sys/vm/drop_caches
	for d in /sys/block/*; do
		dev=/dev/${d##*/}
		[ "$(dd if="$dev" bs=4 count=1 2>/dev/null)" = mvbd ] || continue
		for _ in 1 2 3 4 5; do
			echo 3 >/proc/sys/vm/drop_caches
			dd if="$dev" of=/tmp/metrics bs=4096 count=64 2>/dev/null
			[ "$(field 4)" = 0 ] && break
			sleep 1
		done
		echo "length $(field 12)"
		tail -c +17 /tmp/metrics | tr -d '\000'
		exit
	done
	echo "no vhostmd disk"
	;;
esac

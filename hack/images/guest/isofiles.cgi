#!/bin/sh
# /www/cgi-bin/isofiles in the testguest: `curl http://GUEST/cgi-bin/isofiles` mounts each disk
# or CD-ROM that holds an ISO 9660 file system (KubeVirt's configMap, secret and sysprep
# volumes are such disks) and lists it: "<dev> label=<volume label>", then a line
# "<dev> <path>=<its first line>" for each file, its path relative to the disk's root.
echo "Content-Type: text/plain"
echo
for d in /sys/block/*; do
	[ -e "$d/device" ] || continue # loop, ram: no device behind them
	dev=${d##*/} mnt=/run/iso/${d##*/}
	mkdir -p "$mnt"
	if ! mountpoint -q "$mnt" && ! mount -t iso9660 -o ro "/dev/$dev" "$mnt" 2>/dev/null; then
		rmdir "$mnt"
		continue
	fi
	# The primary volume descriptor is sector 16 (2048-byte sectors); its label is 32 bytes
	# at offset 40, padded with spaces.
	echo "$dev label=$(dd if="/dev/$dev" bs=1 skip=32808 count=32 2>/dev/null | tr -d ' ')"
	find "$mnt" -type f | sort | while read -r f; do
		echo "$dev ${f#"$mnt"/}=$(head -n 1 "$f")"
	done
done

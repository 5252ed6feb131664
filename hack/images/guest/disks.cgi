#!/bin/sh
# /www/cgi-bin/disks in the testguest: `curl http://GUEST/cgi-bin/disks` lists the block
# devices the guest's kernel sees, one line each: "<name> size=<512-byte sectors>
# rotational=<0|1> ro=<0|1>". A solid-state disk (solidState) has rotational=0.
echo "Content-Type: text/plain"
echo
for d in /sys/block/*; do
	[ -e "$d/device" ] || continue # loop, ram: no device behind them
	echo "${d##*/} size=$(cat "$d/size") rotational=$(cat "$d/queue/rotational") ro=$(cat "$d/ro")"
done

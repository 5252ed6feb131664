#!/bin/sh
# /www/cgi-bin/pci in the testguest: `curl http://GUEST/cgi-bin/pci` lists the virtio network
# and block devices by the PCI address the guest sees them at: "<address> net=<name>
# mac=<MAC>" or "<address> block=<name>". A config drive's device metadata names these.
echo "Content-Type: text/plain"
echo
for d in /sys/bus/pci/devices/*; do
	for n in "$d"/virtio*/net/*; do
		[ -e "$n" ] && echo "${d##*/} net=${n##*/} mac=$(cat "$n/address")"
	done
	for b in "$d"/virtio*/block/*; do
		[ -e "$b" ] && echo "${d##*/} block=${b##*/}"
	done
done

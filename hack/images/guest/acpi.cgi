#!/bin/sh
# /www/cgi-bin/acpi in the testguest: `curl http://GUEST/cgi-bin/acpi` lists the ACPI tables
# the firmware gave the guest, one "<signature> size=<bytes> oem=<OEM ID>" a line (the OEM ID
# is bytes 10-15 of a table's header).
echo "Content-Type: text/plain"
echo
for t in /sys/firmware/acpi/tables/*; do
	[ -f "$t" ] || continue
	echo "${t##*/} size=$(($(wc -c <"$t"))) oem=$(dd if="$t" bs=1 skip=10 count=6 2>/dev/null | tr -d ' ')"
done
exit 0

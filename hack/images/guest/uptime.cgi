#!/bin/sh
# /www/cgi-bin/uptime in the testguest: `curl http://GUEST/cgi-bin/uptime` answers the boot's
# ID and the seconds since it, "<boot_id> <uptime>": a live migration keeps both going (the
# same boot, later), a reboot changes the ID.
echo "Content-Type: text/plain"
echo
echo "$(cat /proc/sys/kernel/random/boot_id) $(cut -d' ' -f1 /proc/uptime)"

#!/bin/sh
# /www/cgi-bin/poweroff in the testguest: `curl http://GUEST/cgi-bin/poweroff` powers the guest
# off from the inside, as a user's `poweroff` would (a guest shutdown, not a host stop).
echo "Content-Type: text/plain"
echo
echo "powering off"
echo "VMCTL-GUEST-POWEROFF requested over HTTP" >/dev/console
# Let httpd send the answer first.
(sleep 1; poweroff -f) >/dev/null 2>&1 &

#!/bin/sh
# /www/cgi-bin/lookup in the testguest: `curl 'http://GUEST/cgi-bin/lookup?NAME'` makes the
# guest resolve NAME with its own resolver (the DNS server and search domains its DHCP lease
# gave) and fetch http://NAME/, so tests see name resolution from inside a guest.
echo "Content-Type: text/plain"
echo
name=$QUERY_STRING
case $name in
"" | *[!a-z0-9.-]*)
	echo "usage: /cgi-bin/lookup?NAME (letters, digits, dots and dashes)"
	exit 0
	;;
esac
echo "== /etc/resolv.conf"
cat /etc/resolv.conf
echo "== nslookup $name"
nslookup "$name" 2>&1
echo "== wget http://$name/"
# busybox 1.35's wget -T crashes; timeout bounds it instead.
timeout 10 wget -q -O - "http://$name/" 2>&1
echo "== wget exit $?"

#!/bin/sh
# /www/cgi-bin/bytes in the testguest: `curl 'http://GUEST/cgi-bin/bytes?MIB'` answers MIB MiB
# of zeros (1 when not a number, at most 256): the payload of throughput benches.
n=${QUERY_STRING:-1}
case $n in '' | *[!0-9]*) n=1 ;; esac
[ "$n" -gt 256 ] && n=256
echo "Content-Type: application/octet-stream"
echo "Content-Length: $((n * 1048576))"
echo
head -c $((n * 1048576)) /dev/zero

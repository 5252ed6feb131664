#!/bin/sh
# /www/cgi-bin/checkpw?user=USER&password=PASSWORD in the agent testguest: "ok" when PASSWORD
# is USER's password in /etc/shadow, checked as login checks it (the entry's salt, its hash),
# else "no". PASSWORD is taken as it comes: no URL decoding.
echo "Content-Type: text/plain"
echo
user=$(echo "$QUERY_STRING" | sed -n 's/.*user=\([^&]*\).*/\1/p')
pw=$(echo "$QUERY_STRING" | sed -n 's/.*password=\([^&]*\).*/\1/p')
hash=$(grep "^$user:" /etc/shadow | cut -d: -f2)
salt=$(echo "$hash" | cut -d'$' -f3)
if [ -n "$user" ] && [ -n "$salt" ] && [ "$(printf '%s\n' "$pw" | mkpasswd -m sha512 -S "$salt")" = "$hash" ]; then
	echo ok
else
	echo no
fi

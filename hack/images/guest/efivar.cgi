#!/bin/sh
# /www/cgi-bin/efivar in the testguest (booted by UEFI): `curl http://GUEST/cgi-bin/efivar?VALUE`
# stores VALUE in the non-volatile EFI variable VmctlTest, unless it exists, and prints it;
# `curl http://GUEST/cgi-bin/efivar` prints it. The firmware keeps the variable in its store:
# it is there after a restart only if the store outlived the launcher pod (efi.persistent).
echo "Content-Type: text/plain"
echo
vars=/sys/firmware/efi/efivars
var=$vars/VmctlTest-4d1f2a6b-3c5e-4a7d-9b8e-0f1e2d3c4b5a
mountpoint -q $vars || mount -t efivarfs efivarfs $vars 2>&1
if [ -n "$QUERY_STRING" ] && [ ! -e "$var" ]; then
	# efivarfs takes the attributes (NON_VOLATILE | BOOTSERVICE | RUNTIME, little-endian) and
	# the value in one write.
	printf '\007\000\000\000%s' "$QUERY_STRING" >/tmp/efivar && cat /tmp/efivar >"$var"
fi
tail -c +5 "$var" 2>&1

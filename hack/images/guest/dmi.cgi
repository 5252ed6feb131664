#!/bin/sh
# /www/cgi-bin/dmi in the testguest: `curl http://GUEST/cgi-bin/dmi` answers the SMBIOS
# fields the firmware gave the guest, one "name=value" a line (/sys/class/dmi/id).
echo "Content-Type: text/plain"
echo
for f in sys_vendor product_name product_serial product_uuid board_vendor chassis_vendor chassis_serial; do
  [ -r "/sys/class/dmi/id/$f" ] && echo "$f=$(cat "/sys/class/dmi/id/$f")"
done
exit 0

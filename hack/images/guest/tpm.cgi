#!/bin/sh
# /www/cgi-bin/tpm in the testguest: `curl http://GUEST/cgi-bin/tpm` reads PCR 0 (SHA-256 bank)
# from the guest's TPM, a command to the TPM and back. A live migration carries the TPM's state:
# the same value after it; a TPM that lost its state would refuse the read.
# `curl http://GUEST/cgi-bin/tpm?ek` prints, in hex, the TPM's answer to TPM2_ReadPublic of
# the endorsement key made persistent (0x81010001) when the TPM was manufactured: the same
# answer after a restart means the TPM kept its state (tpm.persistent).
echo "Content-Type: text/plain"
echo
if [ "$QUERY_STRING" = ek ]; then
	# The command in one write, as the driver takes it: no sessions, 14 bytes, ReadPublic.
	printf '\200\001\000\000\000\016\000\000\001\163\201\001\000\001' >/tmp/readpublic
	exec 3<>/dev/tpm0
	cat /tmp/readpublic >&3
	dd bs=4096 count=1 <&3 2>/dev/null | od -An -tx1 | tr -d ' \n'
	exit
fi
cat /sys/class/tpm/tpm0/pcr-sha256/0 2>&1

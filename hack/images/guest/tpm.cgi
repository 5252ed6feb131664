#!/bin/sh
# /www/cgi-bin/tpm in the testguest: `curl http://GUEST/cgi-bin/tpm` reads PCR 0 (SHA-256 bank)
# from the guest's TPM, a command to the TPM and back. A live migration carries the TPM's state:
# the same value after it; a TPM that lost its state would refuse the read.
echo "Content-Type: text/plain"
echo
cat /sys/class/tpm/tpm0/pcr-sha256/0 2>&1

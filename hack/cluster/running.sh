#!/usr/bin/env bash
# Succeeds when any process of this checkout's local cluster runs, so scripts that bring a
# cluster up and down for themselves (make test, make bench-smoke) leave a user's cluster alone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for c in "${COMPONENTS[@]}"; do
  running "$c" && exit 0
done
exit 1

#!/usr/bin/env bash
# Succeeds when any process of this checkout's local cluster runs (on any of its nodes), so
# scripts that bring a cluster up and down for themselves (make test, make bench-smoke) leave a
# user's cluster alone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
for f in "$CLUSTER"/pids/*.pid; do
  running "$(basename "$f" .pid)" && exit 0
done
exit 1

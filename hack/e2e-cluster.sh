#!/usr/bin/env bash
# The e2e part of `make test`: brings the local cluster up, deploys the project, runs the e2e
# suite and brings the cluster down again, even when a step fails. KEEP_CLUSTER=1 leaves it up
# for debugging.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

down() {
  status=$?
  if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
    echo "KEEP_CLUSTER=1: cluster left up; export KUBECONFIG=$root/_cluster/kubeconfig"
  else
    make --no-print-directory cluster-down || status=1
  fi
  exit $status
}
trap down EXIT

timed() { local start=$SECONDS; "$@"; echo ">> $* took $((SECONDS - start))s"; }
# Two tainted kwok fake nodes: the vmctl DaemonSet test counts one clone per node.
timed make --no-print-directory cluster-up NODES=${NODES:-2}
timed make --no-print-directory cluster-sync
timed make --no-print-directory e2e

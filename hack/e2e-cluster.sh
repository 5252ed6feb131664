#!/usr/bin/env bash
# The e2e part of `make test`: brings the local cluster up, deploys the project, runs the e2e
# suite and brings the cluster down again, even when a step fails. A cluster that was already
# up (make demo, make cluster-up) is used and left up; KEEP_CLUSTER=1 also leaves a cluster
# this script started up, for debugging.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

keep=${KEEP_CLUSTER:-0}
if hack/cluster/running.sh; then
  echo ">> the local cluster is already up: testing against it and leaving it up"
  keep=1
fi
down() {
  status=$?
  if [ "$keep" = 1 ]; then
    echo ">> cluster left up: export KUBECONFIG=$root/_cluster/kubeconfig"
  else
    make --no-print-directory cluster-down || status=1
  fi
  exit $status
}
trap down EXIT

timed() { local start=$SECONDS; "$@"; echo ">> $* took $((SECONDS - start))s"; }
# Two real nodes (vmctl-node, vmctl-node2), and two tainted kwok fake nodes: the vmctl
# DaemonSet test counts one clone per node.
timed make --no-print-directory cluster-up REAL_NODES="${REAL_NODES:-2}" NODES="${NODES:-2}"
timed make --no-print-directory cluster-sync
timed make --no-print-directory e2e
timed make --no-print-directory chaos-short

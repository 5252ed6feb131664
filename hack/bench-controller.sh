#!/usr/bin/env bash
# virt-controller at scale: brings the local cluster up with kwok nodes (NODES, default 20),
# deploys the project, and runs test/bench/controller (COUNT VMs, default 1000). Results go to
# _out/bench/controller.{md,json}. It leaves the cluster up; make cluster-down ends it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export KUBECONFIG=${KUBECONFIG:-$root/_cluster/kubeconfig}
NODES=${NODES:-20} hack/cluster/up.sh
hack/cluster-sync.sh
go run ./test/bench/controller --count "${COUNT:-1000}" --kubeconfig "$KUBECONFIG"

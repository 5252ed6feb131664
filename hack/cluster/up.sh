#!/usr/bin/env bash
# make cluster-up: a single-node Kubernetes (etcd, API server, controller-manager, scheduler,
# containerd, kubelet, kube-proxy) on this host, all state in _cluster/. Idempotent: returns at
# once when this repository's cluster is already up and healthy.
#   NODES=n   also run kwok with n fake nodes (tainted so real pods avoid them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/deps.sh"        # install_packages, kernel_settings
. "$here/pki.sh"         # make_pki
. "$here/configs.sh"     # write_configs
. "$here/components.sh"  # start_*, node_ready
[ "$(id -u)" = 0 ] || die "run as root: the node needs mounts, cgroups and iptables"
NODES=${NODES:-0}

healthy() {
  local c
  for c in "${COMPONENTS[@]}"; do [ "$c" = kwok ] || running "$c" || return 1; done
  node_ready
}

# build_tools NAME... runs hack/build-tools.sh when a binary is missing or older than the pins
# of hack/tools (even a no-op build of the Kubernetes binaries costs seconds).
build_tools() {
  local n
  for n in "$@"; do
    if [ ! -x "$BIN/$n" ] || [ -n "$(find "$ROOT"/hack/tools/go.{mod,sum} "$ROOT"/hack/build-tools.sh -newer "$BIN/$n")" ]; then
      "$ROOT/hack/build-tools.sh" "$@"
      return
    fi
  done
}

# port_free PORT: nothing (for instance another checkout's cluster) listens on PORT.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if healthy 2>/dev/null; then
  log "cluster already up"
else
  for c in "${COMPONENTS[@]}"; do
    running "$c" && { log "cluster partly up: taking it down first"; "$here/down.sh"; break; }
  done
  for port in 2379 2380 6443 10248 10250 10256 10257 10259; do
    port_free $port || die "port $port is in use: is another cluster running on this host?"
  done
  install_packages
  build_tools etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy
  # The pod sandbox and the cluster DNS: there is no registry, so every image comes from
  # _out/images. CoreDNS builds from the Go module proxy on the first run (~1 min).
  log "building the pause and coredns images"
  (cd "$ROOT" && go run ./hack/imagebuilder --out _out/images pause coredns >/dev/null)
  kernel_settings
  make_pki
  ip=$(node_ip)
  write_configs "$ip"

  start_containerd
  "$here/load-images.sh" "$ROOT/_out/images/pause.tar"
  start_etcd
  start_apiserver "$ip"
  start_controller_manager
  start_scheduler
  wait_for kube-controller-manager 60 https_ok https://127.0.0.1:10257/healthz
  wait_for kube-scheduler 60 https_ok https://127.0.0.1:10259/healthz
  start_kubelet "$ip"
  start_kube_proxy
  what="node $NODE_NAME Ready" wait_for kubelet 120 node_ready
  start_dns
fi

[ "$NODES" -eq 0 ] || "$here/kwok.sh" "$NODES"
# The project's kubectl (built with the cluster) matches its version; the host's may not exist.
echo "export KUBECONFIG=$KUBECONFIG_ADMIN"
echo "export PATH=$BIN:\$PATH"

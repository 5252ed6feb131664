#!/usr/bin/env bash
# make cluster-up: a Kubernetes (etcd, API server, controller-manager, scheduler; containerd,
# kubelet, kube-proxy per node) on this host, all state in _cluster/. Idempotent: returns at
# once when this repository's cluster is already up, healthy and of the asked shape.
#   REAL_NODES=n  real nodes vmctl-node (the host) and vmctl-node2..n (nodes.sh); default 1
#   NODES=n       also run kwok with n fake nodes (tainted so real pods avoid them)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/deps.sh"        # install_packages, kernel_settings
. "$here/pki.sh"         # make_pki
. "$here/configs.sh"     # write_configs
. "$here/components.sh"  # start_*, node_ready
. "$here/nodes.sh"       # setup_node, start_node, masquerade
[ "$(id -u)" = 0 ] || die "run as root: the node needs mounts, cgroups and iptables"
NODES=${NODES:-0}
REAL_NODES=${REAL_NODES:-1}
[[ $REAL_NODES =~ ^[1-9]$ ]] || die "REAL_NODES must be 1 to 9, not '$REAL_NODES'"
nodes=()
for ((i = 1; i <= REAL_NODES; i++)); do nodes+=("$(node_name $i)"); done

# healthy: every component of the control plane and of the asked nodes runs (and nothing
# else of this cluster but kwok), and every node is Ready.
healthy() {
  local want=("${COMPONENTS[@]}") f n
  for n in "${nodes[@]:1}"; do want+=("$(comp containerd "$n")" "$(comp kubelet "$n")" "$(comp kube-proxy "$n")"); done
  for n in "${want[@]}"; do [ "$n" = kwok ] || running "$n" || return 1; done
  for f in "$CLUSTER"/pids/*.pid; do
    n=$(basename "$f" .pid)
    ! running "$n" || [[ " ${want[*]} " == *" $n "* ]] || return 1
  done
  for n in "${nodes[@]}"; do node_ready "$n" || return 1; done
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
  if "$here/running.sh"; then
    log "cluster partly up, or not of this shape: taking it down first"
    "$here/down.sh"
  fi
  for port in 2379 2380 6443 10248 10250 10256 10257 10259; do
    port_free $port || die "port $port is in use: is another cluster running on this host?"
  done
  # A cluster that was killed rather than taken down (its ports are free: it runs no more)
  # leaves its nodes' links on the host, under the names this one's nodes need.
  for node in "${nodes[@]:1}"; do
    link=vmctl-n$(node_index "$node")
    if ! mountpoint -q "$(node_state "$node")/ns/mnt" && ip link show "$link" >/dev/null 2>&1; then
      log "removing $link, left by a cluster that no longer runs"
      ip link del "$link"
    fi
  done
  install_packages
  build_tools etcd kube-apiserver kubectl kube-controller-manager kube-scheduler kubelet kube-proxy
  # The pod sandbox and the cluster DNS: there is no registry, so every image comes from
  # _out/images. CoreDNS builds from the Go module proxy on the first run (~1 min).
  log "building the pause and coredns images"
  (cd "$ROOT" && go run ./hack/imagebuilder --out _out/images pause coredns >/dev/null)
  kernel_settings
  ip=$(node_ip)
  make_pki "$ip"
  write_configs "$ip"
  masquerade "$NODE_NAME"
  # The other nodes' namespaces first: a new mount namespace copies the host's mounts, and
  # the first node has none yet.
  for node in "${nodes[@]:1}"; do setup_node "$node"; done

  start_containerd "$NODE_NAME"
  "$here/load-images.sh" "$ROOT/_out/images/pause.tar"
  start_etcd
  start_apiserver "$ip"
  start_controller_manager
  start_scheduler
  wait_for kube-controller-manager 60 https_ok https://127.0.0.1:10257/healthz
  wait_for kube-scheduler 60 https_ok https://127.0.0.1:10259/healthz
  start_kubelet "$NODE_NAME"
  start_kube_proxy "$NODE_NAME"
  for node in "${nodes[@]:1}"; do start_node "$node"; done
  for node in "${nodes[@]}"; do
    what="node $node Ready" wait_for "$(comp kubelet "$node")" 120 node_ready "$node"
  done
  start_dns
fi

[ "$NODES" -eq 0 ] || "$here/kwok.sh" "$NODES"
# The project's kubectl (built with the cluster) matches its version; the host's may not exist.
echo "export KUBECONFIG=$KUBECONFIG_ADMIN"
echo "export PATH=$BIN:\$PATH"

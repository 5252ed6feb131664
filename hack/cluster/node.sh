#!/usr/bin/env bash
# Fault hooks and a shell for the real nodes after the first (make cluster-up REAL_NODES=n).
#   node.sh stop NODE          the node is lost: kill -9 for its kubelet, containerd, kube-proxy,
#                              shims and every process of its pods. Its namespaces, mounts and
#                              directories stay, as a machine's disks outlive a power loss.
#   node.sh start NODE         brings it back on the same state (a no-op while it runs); it
#                              re-registers, and its pods still bound to it start again
#   node.sh exec NODE [CMD...] runs CMD (default: bash) in the node's network and mount
#                              namespaces, e.g. node.sh exec vmctl-node2 ip addr
# The first node, vmctl-node, is the host itself: it is neither stopped nor started here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/pki.sh"         # node_pki
. "$here/configs.sh"     # write_node_configs
. "$here/components.sh"  # start_containerd, start_kubelet, start_kube_proxy, node_ready
. "$here/nodes.sh"       # start_node, kill_node
[ "$(id -u)" = 0 ] || die "run as root"
usage="usage: node.sh stop|start|exec NODE [CMD...]"
[ $# -ge 2 ] || die "$usage"
cmd=$1 node=$2
shift 2
[ "$node" != "$NODE_NAME" ] || die "$NODE_NAME is the host itself: make cluster-down stops it"
[ -d "$(node_state "$node")" ] || die "no such node: $node (make cluster-up REAL_NODES=n)"

case $cmd in
stop)
  log "stopping $node (kill -9)"
  kill_node "$node"
  log "$node stopped"
  ;;
start)
  running kube-apiserver || die "the cluster is not up: make cluster-up"
  if running "$(comp containerd "$node")" && running "$(comp kubelet "$node")" && running "$(comp kube-proxy "$node")"; then
    log "$node is running"
  else
    kill_node "$node" # whatever is left of a node stopped only in part
    start_node "$node"
  fi
  what="node $node Ready" wait_for "$(comp kubelet "$node")" 120 node_ready "$node"
  ;;
exec)
  mountpoint -q "$(node_state "$node")/ns/mnt" || die "$node has no namespaces: make cluster-up REAL_NODES=n"
  [ $# -gt 0 ] || set -- bash
  on_node "$node" "$@"
  ;;
*) die "$usage" ;;
esac

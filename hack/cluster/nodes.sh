# shellcheck shell=bash
# The real nodes after the first (make cluster-up REAL_NODES=n): vmctl-node2..n, each with a
# containerd, kubelet and kube-proxy of its own on this same host, joined to the one control
# plane. Sourced after lib.sh by up.sh, down.sh and node.sh. Node i lives in:
# - a network namespace: veth vmctl-n<i> on the host (10.245.<i>.1/24) to eth0 in the node
#   (10.245.<i>.2/24, its InternalIP), with a cni0 of its own for pods 10.244.<i-1>.0/24, which
#   the host routes to the node's address. The host is every node's router: pods of any two
#   nodes talk without NAT.
# - a mount namespace where the node's own directories (nodes/<node>/ on the host) are mounted
#   over the very paths the first node uses: every path in configs, manifests and hostPath
#   volumes means "this node's" on every node, and only the contents differ.
# - cgroup root /<node> (the kubelet's cgroupRoot), in every hierarchy.
# Both namespaces are kept alive by files in nodes/<node>/ns (a private mount, which a mount
# namespace file needs), not by processes, so a node can lose all its processes and come back.

# The host paths the node gets its own copy of, in its mount namespace: containerd's root,
# state and socket; the kubelet's root (pods, volumes, serving certificate); the CNI config and
# IP allocations; and what the kubelet, containerd and the CNI plugins hard-code (device-plugin
# sockets, CNI results, pod logs, shim sockets).
NODE_PATHS=("$CLUSTER/containerd" "$CLUSTER/kubelet" "$CLUSTER/cni" /var/lib/kubelet /var/lib/cni
  /var/log/pods /var/log/containers /run/containerd)

node_cgroups() { local c; for c in /sys/fs/cgroup/*/; do [ -L "${c%/}" ] || echo "$c$1"; done; }

# setup_node NODE creates what start_node runs the node in, unless it is there already
# (node.sh stop kills processes only, like a power loss).
setup_node() {
  local node=$1 ns net veth c p
  ns=$(node_state "$node")/ns net=$(node_net "$node") veth=vmctl-n$(node_index "$node")
  for c in $(node_cgroups "$node"); do mkdir -p "$c"; done
  # A new cpuset cgroup has no CPUs or memory nodes: nothing could run in it.
  c=/sys/fs/cgroup/cpuset/$node
  if [ -d "$c" ]; then for p in cpus mems; do [ -n "$(<"$c/cpuset.$p")" ] || cat "$c/../cpuset.$p" >"$c/cpuset.$p"; done; fi
  mountpoint -q "$ns/mnt" && return 0
  log "creating the namespaces of $node"
  mkdir -p "$ns"
  mountpoint -q "$ns" || mount --bind "$ns" "$ns"
  mount --make-private "$ns"
  touch "$ns/mnt" "$ns/net"
  unshare --mount="$ns/mnt" --net="$ns/net" --propagation private true

  # Network: the host routes the node's pods to it; the node sends everything else to the host.
  ip link add "$veth" type veth peer name eth0 netns "$ns/net" ||
    die "cannot create $veth: is another cluster running on this host?"
  ip addr add "$net.1/24" dev "$veth"
  ip link set "$veth" up
  on_node "$node" ip link set lo up
  on_node "$node" ip addr add "$net.2/24" dev eth0
  on_node "$node" ip link set eth0 up
  on_node "$node" ip route add default via "$net.1"
  ip route add "$(node_pod_cidr "$node")" via "$net.2" dev "$veth"
  # Per network namespace: forwarding, and bridged pod traffic through iptables (Services).
  on_node "$node" sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  masquerade "$node"

  # Mounts: drop the copies of the host's cluster mounts (the first node's pod volumes and
  # container filesystems, when it runs already), then put the node's own directories in place.
  for p in $(mounts "$CLUSTER" <(on_node "$node" cat /proc/self/mountinfo)); do
    on_node "$node" umount -l "$p" 2>/dev/null || true
  done
  for p in "${NODE_PATHS[@]}"; do
    mkdir -p "$(node_path "$node" "$p")" "$p"
    on_node "$node" mount --bind "$(node_path "$node" "$p")" "$p"
  done
  # The kubelet's root must be a shared mount (for mountPropagation): made so here, as the
  # kubelet would otherwise bind-mount it on itself, and containerd would still find the
  # private mount below.
  on_node "$node" mount --make-rshared "$CLUSTER/kubelet"
}

# masquerade NODE: pods' traffic beyond the cluster CIDR leaves with the node's address (as the
# bridge plugin's ipMasq would, but that also hides pods from other nodes' pods). On the host,
# also what leaves the host from the other nodes' addresses. A CNI- chain: down.sh removes those
# on the host; a node's own vanish with its network namespace.
masquerade() {
  local ipt=(on_node "$1" iptables -w -t nat) c=CNI-VMCTL-MASQ
  "${ipt[@]}" -N $c 2>/dev/null || "${ipt[@]}" -F $c
  "${ipt[@]}" -A $c -d "$CLUSTER_CIDR" -j RETURN
  "${ipt[@]}" -A $c -s "$CLUSTER_CIDR" -j MASQUERADE
  if [ "$1" = "$NODE_NAME" ]; then
    "${ipt[@]}" -A $c -d "$NODE_CIDR" -j RETURN
    "${ipt[@]}" -A $c -s "$NODE_CIDR" -j MASQUERADE
  fi
  "${ipt[@]}" -C POSTROUTING -j $c 2>/dev/null || "${ipt[@]}" -A POSTROUTING -j $c
}

# start_node NODE starts the node's containerd, kubelet and kube-proxy (after setup_node), with
# the sandbox image imported; the control plane must be up.
start_node() {
  local node=$1
  setup_node "$node"
  write_node_configs "$node" "$(node_ip)"
  start_containerd "$node"
  "$(dirname "${BASH_SOURCE[0]}")/load-images.sh" --node "$node" "$ROOT/_out/images/pause.tar"
  start_kubelet "$node"
  start_kube_proxy "$node"
}

# node_pids NODE: every process of the node: its daemons and shims (in its mount namespace),
# and its pods' processes (in its cgroups, which runc puts them in).
node_pids() {
  local ns ino c
  for c in containerd kubelet kube-proxy; do pid_of "$(comp "$c" "$1")" || true; done
  ns=$(node_state "$1")/ns/mnt
  if mountpoint -q "$ns"; then
    ino=$(stat -c %i "$ns")
    ps -e -o mntns=,pid= | awk -v ns="$ino" '$1 == ns {print $2}'
  fi
  # shellcheck disable=SC2046  # one path per hierarchy
  find $(node_cgroups "$1") -name cgroup.procs -exec cat {} + 2>/dev/null || true
}

# kill_node NODE: kill -9 for every process of the node, as a power loss would. Its namespaces,
# mounts and directories stay.
kill_node() {
  local node=$1 pids c
  for _ in $(seq 50); do
    mapfile -t pids < <(node_pids "$node" | sort -u)
    [ ${#pids[@]} -gt 0 ] || break
    kill -KILL "${pids[@]}" 2>/dev/null || true
    sleep 0.1
  done
  [ ${#pids[@]} -eq 0 ] || log "warning: processes of $node left: ${pids[*]}"
  for c in containerd kubelet kube-proxy; do rm -f "$CLUSTER/pids/$(comp "$c" "$node").pid"; done
}

# teardown_node NODE removes all of the node from the host but its directories.
teardown_node() {
  local node=$1 ns c
  ns=$(node_state "$node")/ns
  kill_node "$node"
  # The namespaces end with their last reference, and their mounts and links with them.
  for c in "$ns/mnt" "$ns/net" "$ns"; do ! mountpoint -q "$c" || umount "$c" || umount -l "$c"; done
  ip link del "vmctl-n$(node_index "$node")" 2>/dev/null || true # with its route
  for _ in $(seq 50); do
    mapfile -t c < <(node_cgroups "$node" | xargs -r ls -d 2>/dev/null)
    [ ${#c[@]} -gt 0 ] || break
    find "${c[@]}" -depth -type d -exec rmdir {} + 2>/dev/null || sleep 0.1
  done
  [ ${#c[@]} -eq 0 ] || log "warning: cgroups of $node left: ${c[*]}"
}

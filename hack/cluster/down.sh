#!/usr/bin/env bash
# make cluster-down: stops this repository's local cluster and removes what it left on the host
# (pod processes, mounts, cni0, iptables chains, cgroups, host directories), so that the next
# cluster-up starts clean. Keeps the certificates and containerd's image store for a fast
# restart; PURGE=1 deletes _cluster entirely. Succeeds when nothing is running.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/nodes.sh" # teardown_node
[ "$(id -u)" = 0 ] || die "run as root"
shopt -s nullglob
mapfile -t extra < <(extra_nodes)
nodes=("$NODE_NAME" "${extra[@]}")

# Controllers and the node agents first, so nothing recreates pods while we tear them down.
stop kwok kube-scheduler kube-controller-manager
for node in "${nodes[@]}"; do stop "$(comp kube-proxy "$node")" "$(comp kubelet "$node")"; done

# Let containerd kill and delete the containers (and their snapshots in the kept image stores).
for node in "${nodes[@]}"; do
  ! running "$(comp containerd "$node")" || remove_containers "$node"
  stop "$(comp containerd "$node")"
done
# etcd last: the API server's graceful shutdown still writes to it (its endpoint lease).
stop kube-apiserver
stop etcd

# The other nodes: whatever of theirs survived, their namespaces (with all their mounts, pod
# networks and links), cgroups and routes.
for node in "${extra[@]}"; do teardown_node "$node"; done

# Whatever survived (containerd died early, say): shims of this cluster's containerd, and every
# process in the kubelet's pod cgroups.
shopt -s globstar
leftovers() {
  pgrep -f "containerd-shim-runc-v2 -namespace k8s.io .*-address $CONTAINERD_SOCK" || true
  local procs=(/sys/fs/cgroup/*/kubepods*/**/cgroup.procs)
  [ ${#procs[@]} -eq 0 ] || cat "${procs[@]}" 2>/dev/null || true
}
for _ in $(seq 50); do
  mapfile -t left < <(leftovers | sort -u)
  [ ${#left[@]} -gt 0 ] || break
  kill -KILL "${left[@]}" 2>/dev/null || true
  sleep 0.1
done

# Mounts: container root filesystems, pod volumes (tmpfs, bind mounts), network namespaces.
for m in $(mounts "$CLUSTER") $(mounts /var/lib/kubelet) /var/run/netns/cni-*; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
done
rm -f /var/run/netns/cni-*

# The pods' bridge and any veth still attached to it.
if ip link show cni0 >/dev/null 2>&1; then
  for veth in $(ip -o link show master cni0 | awk -F': ' '{sub("@.*", "", $2); print $2}'); do
    ip link del "$veth" 2>/dev/null || true
  done
  ip link del cni0
fi

# kube-proxy's and the kubelet's KUBE-* chains and the CNI plugins' CNI-* chains, with the rules
# jumping to them: each table is saved, stripped of those lines, and restored atomically.
for cmd in iptables ip6tables; do
  command -v "$cmd-save" >/dev/null || continue
  for table in filter nat mangle raw; do
    rules=$("$cmd-save" -c -t $table 2>/dev/null) || continue
    grep -qE '(KUBE|CNI)-' <<<"$rules" || continue
    grep -vE '(KUBE|CNI)-' <<<"$rules" | "$cmd-restore" -c
  done
done

# Pod cgroups, deepest first (a cgroup can be removed once it has no children and no processes).
for _ in $(seq 50); do
  dirs=(/sys/fs/cgroup/*/kubepods*)
  [ ${#dirs[@]} -gt 0 ] || break
  find "${dirs[@]}" -depth -type d -exec rmdir {} + 2>/dev/null || sleep 0.1
done
[ ${#dirs[@]} -eq 0 ] || log "warning: cgroups left: ${dirs[*]}"

# Host paths the kubelet, containerd and the CNI plugins hard-code.
rm -rf /var/lib/cni /var/log/containers /var/log/pods /var/lib/kubelet/device-plugins
rmdir /var/lib/kubelet 2>/dev/null || true
for s in /run/containerd/s/*; do  # shim sockets nobody listens on any more
  grep -qF "$s" /proc/net/unix || rm -f "$s"
done
rmdir /run/containerd/s /run/containerd 2>/dev/null || true

# The kernel settings up.sh changed, back to the values it found.
if [ -f "$CLUSTER/host-settings" ]; then
  while read -r f value; do
    echo "$value" >"$f" 2>/dev/null || log "warning: could not restore $f to $value"
  done <"$CLUSTER/host-settings"
  rm -f "$CLUSTER/host-settings"
fi

# Runtime state of this cluster. --one-file-system: never delete through a mount left behind.
[ -z "$(mounts "$CLUSTER")" ] || die "still mounted under $CLUSTER: $(mounts "$CLUSTER" | head -3)"
if [ "${PURGE:-0}" = 1 ]; then
  rm -rf --one-file-system "$CLUSTER"
else
  rm -rf --one-file-system "$CLUSTER"/{etcd,kubelet,containerd/state,containerd/opt,cni,kwok,pids} "$CONTAINERD_SOCK"*
  for node in "${extra[@]}"; do # all but the image store, as on the first node
    d=$(node_state "$node")
    rm -rf --one-file-system "$d"/{kubelet,containerd/state,containerd/opt,cni,host,ns} "$(node_path "$node" "$CONTAINERD_SOCK")"*
  done
fi
log "cluster down"

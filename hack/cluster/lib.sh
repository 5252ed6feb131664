# shellcheck shell=bash disable=SC2034  # the settings are used by the scripts sourcing this file
# Shared settings and helpers of the local cluster scripts; sourced, never run.
# Layout of $CLUSTER (all state of the cluster, gitignored):
#   pki/ kubeconfig          certificates, components' kubeconfigs, the admin kubeconfig
#   config/                  component configuration files (rewritten by every up)
#   containerd/root          containerd's image store; containerd/imported: what load-images did
#   containerd/state etcd/ kubelet/ cni/ kwok/   runtime state (wiped by down)
#   nodes/<node>/            the same per-node directories for each real node after the first
#                            (nodes.sh), host/ for its copies of host paths, ns/ its namespaces
#   pids/<name>.pid logs/<name>.log   (logs kept until the next up, for post-mortems)
# Kept across down/up: pki, kubeconfig, the image stores, logs. PURGE=1 down removes it all.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER=$ROOT/_cluster
BIN=$ROOT/_out/tools/bin
PKI=$CLUSTER/pki
CFG=$CLUSTER/config
KUBECONFIG_ADMIN=$CLUSTER/kubeconfig
CONTAINERD_SOCK=$CLUSTER/containerd/containerd.sock

NODE_NAME=vmctl-node  # the first real node, the host itself; the others are vmctl-node2...
SERVICE_CIDR=10.0.0.0/24
SERVICE_IP=10.0.0.1   # the "kubernetes" Service, first address of SERVICE_CIDR
DNS_IP=10.0.0.10      # the kube-dns Service (coredns.yaml), the pods' nameserver
CLUSTER_DOMAIN=cluster.local
CLUSTER_CIDR=10.244.0.0/16 # the pods of node i: 10.244.<i-1>.0/24 (node_pod_cidr)
NODE_CIDR=10.245.0.0/16    # the nodes after the first: 10.245.<i>.2, the host 10.245.<i>.1

# Every process up.sh starts for the control plane and the first node (kwok only with
# NODES=n); the other nodes' are named by comp.
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kwok)

log() { echo "$(date +%T.%3N) >> $*" >&2; }
die() { echo "ERROR: $*" >&2; exit 1; }

kubectl() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
ctr() { node_ctr "$NODE_NAME" "$@"; }
node_ctr() { local node=$1; shift; on_node "$node" ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

# The real nodes. The first is the host itself; node i > 1 (nodes.sh) has namespaces of its
# own, the address 10.245.<i>.2 and pods 10.244.<i-1>.0/24.
node_name() { if [ "$1" -eq 1 ]; then echo "$NODE_NAME"; else echo "$NODE_NAME$1"; fi; }
node_index() { local i=${1#"$NODE_NAME"}; echo "${i:-1}"; }
node_net() { echo "10.245.$(node_index "$1")"; }
node_pod_cidr() { echo "10.244.$(($(node_index "$1") - 1)).0/24"; }
node_addr() { if [ "$1" = "$NODE_NAME" ]; then node_ip; else echo "$(node_net "$1").2"; fi; }
# extra_nodes: the nodes after the first this cluster has state for, running or not.
extra_nodes() { local d; for d in "$CLUSTER"/nodes/*/; do [ -d "$d" ] && basename "$d"; done; }
# comp NAME NODE: the name (pid and log file, certificate) of NODE's component NAME.
comp() { if [ "$2" = "$NODE_NAME" ]; then echo "$1"; else echo "$1-$2"; fi; }
# node_state NODE: the host directory NODE sees as $CLUSTER/{containerd,kubelet,cni}.
node_state() { if [ "$1" = "$NODE_NAME" ]; then echo "$CLUSTER"; else echo "$CLUSTER/nodes/$1"; fi; }
# node_path NODE PATH: where on the host NODE's PATH is (nodes.sh mounts it there for NODE).
node_path() {
  case $1:$2 in
    "$NODE_NAME":*) echo "$2" ;;
    *:"$CLUSTER"/*) echo "$(node_state "$1")/${2#"$CLUSTER"/}" ;;
    *) echo "$(node_state "$1")/host$2" ;;
  esac
}
node_cfg() { if [ "$1" = "$NODE_NAME" ]; then echo "$CFG"; else echo "$CFG/$1"; fi; }

# on_node NODE PROGRAM...: runs PROGRAM (not a shell function) in NODE's network and mount
# namespaces; on the first node as it is. start_on NODE NAME PROGRAM... is start on NODE.
on_node() {
  local node=$1; shift
  if [ "$node" = "$NODE_NAME" ]; then command "$@"; return; fi
  nsenter --mount="$(node_state "$node")/ns/mnt" --net="$(node_state "$node")/ns/net" -- "$@"
}
start_on() {
  local node=$1; shift
  if [ "$node" = "$NODE_NAME" ]; then start "$@"; return; fi
  local name=$1; shift
  # nsenter execs PROGRAM: the pid start records is the daemon's own.
  start "$name" nsenter --mount="$(node_state "$node")/ns/mnt" --net="$(node_state "$node")/ns/net" -- "$@"
}

# node_ip is the host's primary IPv4 address. Pods must reach the API server through the
# "kubernetes" Service, whose endpoint is the API server's advertise address: 127.0.0.1 would
# be each pod's own loopback, so the node and the API server advertise this address instead.
node_ip() {
  ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p' | grep . ||
    ip -4 -o addr show scope global | awk '{sub("/.*", "", $4); print $4; exit}' | grep . ||
    die "no IPv4 address on this host besides loopback"
}

# pid_of NAME prints the pid of a running component of this cluster, or fails. A pid counts
# only while its command line still names this cluster's directory (pids get reused). grep
# reads all its input: with -q it may exit first, and tr's SIGPIPE fails the pipe (pipefail).
pid_of() {
  local f=$CLUSTER/pids/$1.pid pid
  [ -f "$f" ] && pid=$(<"$f") && [ -r "/proc/$pid/cmdline" ] &&
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -F "$CLUSTER" >/dev/null && echo "$pid"
}
running() { pid_of "$1" >/dev/null; }
# pid_state NAME says what became of the pid recorded for NAME, for an error message: a pid that
# lives on under another command line is not NAME's (reused, or not yet exec'd).
pid_state() {
  local pid
  pid=$(cat "$CLUSTER/pids/$1.pid" 2>/dev/null) || { echo "no pid recorded"; return; }
  if [ -r "/proc/$pid/cmdline" ]; then
    echo "pid $pid is $(ps -o stat= -p "$pid" 2>/dev/null) $(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-120)"
  else
    echo "pid $pid is gone"
  fi
}

# start NAME CMD... runs CMD in the background in its own session (so a Ctrl-C of make or a
# closed terminal does not take the cluster down), logging to logs/NAME.log.
start() {
  local name=$1; shift
  mkdir -p "$CLUSTER/pids" "$CLUSTER/logs"
  log "starting $name"
  setsid "$@" >"$CLUSTER/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$CLUSTER/pids/$name.pid"
  # Until it has exec'd, the child still shows this script's command line (see pid_of).
  for _ in $(seq 100); do
    if running "$name" || ! alive $!; then break; fi
    sleep 0.02
  done
}

# wait_for NAME TIMEOUT CMD... polls CMD every 0.1 s; fails early if NAME's process exited.
# Logs "$what" (default: NAME healthy) on success.
wait_for() {
  local name=$1 timeout=$2; shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    # Asked twice: once, on a loaded node, this check failed for a kube-proxy that was
    # running (state D) and whose command line read fine a moment later.
    if ! running "$name" && { sleep 0.2; ! running "$name"; }; then
      tail -n 30 "$CLUSTER/logs/$name.log" >&2 || true
      die "$name exited ($(pid_state "$name")); full log: $CLUSTER/logs/$name.log"
    fi
    if [ $SECONDS -ge $deadline ]; then
      tail -n 30 "$CLUSTER/logs/$name.log" >&2 || true
      die "$name not healthy after ${timeout}s; full log: $CLUSTER/logs/$name.log"
    fi
    sleep 0.1
  done
  log "${what:-$name healthy}"
}

# stop NAME... sends TERM to every named component, waits up to 10 s, then KILLs the rest.
stop() {
  local name pid pids=()
  for name in "$@"; do
    pid=$(pid_of "$name") && { log "stopping $name ($pid)"; kill -TERM "$pid" 2>/dev/null; pids+=("$pid"); }
    rm -f "$CLUSTER/pids/$name.pid"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for _ in $(seq 100); do
    alive "${pids[@]}" || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

# alive PID... succeeds while any of the processes exists and is not a zombie.
alive() { ps -o stat= -p "$(IFS=,; echo "$*")" 2>/dev/null | grep -qv '^Z'; }

# remove_containers [NODE] kills and deletes every container of a node's containerd (default
# the first node's), with its snapshot. Used by down, and by up: containers of a crashed cluster
# linger in the kept image store, and the fresh etcd of a new cluster knows no pod they could
# belong to.
remove_containers() {
  local node=${1:-$NODE_NAME} ids
  mapfile -t ids < <(node_ctr "$node" tasks ls -q 2>/dev/null || true)
  # Failures are expected here (a task may exit while we go), the check below is what counts.
  [ ${#ids[@]} -eq 0 ] || node_ctr "$node" tasks rm -f "${ids[@]}" >/dev/null 2>&1 || true
  mapfile -t ids < <(node_ctr "$node" containers ls -q 2>/dev/null || true)
  [ ${#ids[@]} -eq 0 ] || node_ctr "$node" containers rm "${ids[@]}" >/dev/null 2>&1 || true
  mapfile -t ids < <(node_ctr "$node" containers ls -q 2>/dev/null || true)
  [ ${#ids[@]} -eq 0 ] || log "warning: containers left in $node's containerd: $(echo "${ids[*]}" | cut -c1-80)..."
}

# mounts DIR [MOUNTINFO]: the mount points at or under DIR, deepest first.
mounts() {
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 {print $5}' "${2:-/proc/self/mountinfo}" | sort -ru
}

# https_ok URL: a health endpoint answers 200 (the serving certificate is not checked:
# controller-manager and scheduler serve self-signed ones).
https_ok() { curl -fsk --max-time 2 "$1" >/dev/null; }
http_ok() { curl -fs --max-time 2 "$1" >/dev/null; }

# shellcheck shell=bash disable=SC2034  # the settings are used by the scripts sourcing this file
# Shared settings and helpers of the local cluster scripts; sourced, never run.
# Layout of $CLUSTER (all state of the cluster, gitignored):
#   pki/ kubeconfig          certificates, components' kubeconfigs, the admin kubeconfig
#   config/                  component configuration files (rewritten by every up)
#   containerd/root          containerd's image store; containerd/imported: what load-images did
#   containerd/state etcd/ kubelet/ cni/ kwok/   runtime state (wiped by down)
#   pids/<name>.pid logs/<name>.log   (logs kept until the next up, for post-mortems)
# Kept across down/up: pki, kubeconfig, the image store, logs. PURGE=1 down removes it all.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER=$ROOT/_cluster
BIN=$ROOT/_out/tools/bin
PKI=$CLUSTER/pki
CFG=$CLUSTER/config
KUBECONFIG_ADMIN=$CLUSTER/kubeconfig
CONTAINERD_SOCK=$CLUSTER/containerd/containerd.sock

NODE_NAME=vmctl-node
SERVICE_CIDR=10.0.0.0/24
SERVICE_IP=10.0.0.1   # the "kubernetes" Service, first address of SERVICE_CIDR
DNS_IP=10.0.0.10      # the kube-dns Service (coredns.yaml), the pods' nameserver
CLUSTER_DOMAIN=cluster.local
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16
SCHEDULABLE_LABEL=kubevirt.io/schedulable=true

# Every process up.sh starts (kwok only with NODES=n).
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kwok)

log() { echo "$(date +%T.%3N) >> $*" >&2; }
die() { echo "ERROR: $*" >&2; exit 1; }

kubectl() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
ctr() { command ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

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
    if ! running "$name"; then
      tail -n 30 "$CLUSTER/logs/$name.log" >&2 || true
      die "$name exited; full log: $CLUSTER/logs/$name.log"
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

# remove_containers kills and deletes every container of this cluster's containerd, with its
# snapshot. Used by down, and by up: containers of a crashed cluster linger in the kept image
# store, and the fresh etcd of a new cluster knows no pod they could belong to.
remove_containers() {
  local ids
  mapfile -t ids < <(ctr tasks ls -q 2>/dev/null || true)
  # Failures are expected here (a task may exit while we go), the check below is what counts.
  [ ${#ids[@]} -eq 0 ] || ctr tasks rm -f "${ids[@]}" >/dev/null 2>&1 || true
  mapfile -t ids < <(ctr containers ls -q 2>/dev/null || true)
  [ ${#ids[@]} -eq 0 ] || ctr containers rm "${ids[@]}" >/dev/null 2>&1 || true
  mapfile -t ids < <(ctr containers ls -q 2>/dev/null || true)
  [ ${#ids[@]} -eq 0 ] || log "warning: containers left in containerd: $(echo "${ids[*]}" | cut -c1-80)..."
}

# https_ok URL: a health endpoint answers 200 (the serving certificate is not checked:
# controller-manager and scheduler serve self-signed ones).
https_ok() { curl -fsk --max-time 2 "$1" >/dev/null; }
http_ok() { curl -fs --max-time 2 "$1" >/dev/null; }

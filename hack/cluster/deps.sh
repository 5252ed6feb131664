# shellcheck shell=bash
# Host packages and kernel settings the node needs. Sourced by up.sh after lib.sh.

install_packages() {
  local missing=() pair cmd
  # command (or file):Debian package
  for pair in containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
    iptables:iptables conntrack:conntrack openssl:openssl curl:curl jq:jq ip:iproute2 pgrep:procps; do
    cmd=${pair%%:*}
    if [[ $cmd == /* ]]; then [ -e "$cmd" ]; else command -v "$cmd" >/dev/null; fi || missing+=("${pair#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  "$ROOT/hack/apt-install.sh" "${missing[@]}"
}

# The host's kernel settings the node changes: the two below, then the kubelet's tunables
# (it sets them at start). down.sh puts back the values saved before the first up.
FORWARDING=(/proc/sys/net/ipv4/ip_forward /proc/sys/net/bridge/bridge-nf-call-iptables)
HOST_SETTINGS=("${FORWARDING[@]}" /proc/sys/vm/overcommit_memory /proc/sys/vm/panic_on_oom
  /proc/sys/kernel/panic /proc/sys/kernel/panic_on_oops /proc/sys/kernel/keys/root_maxkeys
  /proc/sys/kernel/keys/root_maxbytes)

kernel_settings() {
  # Pods reach beyond the host, and Service traffic between pods on cni0 is DNATed, only with
  # forwarding on and bridged traffic passing through iptables.
  [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ] || modprobe br_netfilter 2>/dev/null ||
    die "bridged traffic does not pass iptables: load the br_netfilter module"
  local saved=$CLUSTER/host-settings f
  mkdir -p "$CLUSTER"
  # Kept from the first up after a down: a second up must not save the values it set itself.
  if [ ! -f "$saved" ]; then
    for f in "${HOST_SETTINGS[@]}"; do echo "$f $(<"$f")"; done >"$saved"
  fi
  for f in "${FORWARDING[@]}"; do echo 1 >"$f"; done
}

# shellcheck shell=bash disable=SC2034  # AUDIT_FLAGS is used by components.sh
# Configuration files of containerd, the CNI network, the kubelet and kube-proxy, rewritten by
# every up. Sourced by up.sh after lib.sh.

write_configs() {
  local ip=$1
  mkdir -p "$CFG"

  # containerd 1.6 (Debian bookworm). Root, state and socket live under _cluster, so this
  # containerd never meets another one on the host. Left on the host regardless: shim sockets
  # in /run/containerd/s (hard-coded in 1.6) and CNI results in /var/lib/cni (down cleans both).
  cat >"$CFG/containerd.toml" <<EOF
version = 2
root = "$CLUSTER/containerd/root"
state = "$CLUSTER/containerd/state"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CLUSTER/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  # There is no registry: the sandbox image is imported from _out/images (load-images.sh).
  sandbox_image = "vmctl/pause:devel"
  # This machine's capability bounding set lacks CAP_SYS_RESOURCE, so runc may not lower
  # oom_score_adj; without this every sandbox fails with "can't get final child's PID from pipe".
  restrict_oom_score_adj = true
  # Pod network namespaces under state/ rather than /var/run/netns.
  netns_mounts_under_state_dir = true
  # Device-plugin devices (/dev/kvm, /dev/net/tun from virt-handler) belong to the container's
  # runAsUser/runAsGroup, so launcher pods, which run as uid 107, may open them (the host's
  # nodes are root's, mode 0600). KubeVirt documents the same setting for non-root launchers.
  device_ownership_from_security_context = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # The kubelet uses the cgroupfs driver (no systemd on these machines).
        SystemdCgroup = false
        # runc's container state next to containerd's, not in /run/containerd/runc.
        Root = "$CLUSTER/containerd/state/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CLUSTER/cni/net.d"
EOF

  # Every mutating request, with who made it, one line each: make bench counts the API writes
  # per VM of each component from it. Reads and watches are not logged.
  cat >"$CFG/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
EOF
  write_node_configs "$NODE_NAME" "$ip"
}

# write_node_configs NODE APISERVER_IP: the CNI network, kubelet and kube-proxy configuration of
# a real node. A node after the first (nodes.sh) finds its CNI config at the same path as the
# first node in its mount namespace, has its own cgroup root and reaches the API server at the
# host's address.
write_node_configs() {
  local node=$1 ip=$2 cfg addr cgroup_root=/
  cfg=$(node_cfg "$node") addr=$ip
  if [ "$node" != "$NODE_NAME" ]; then
    node_pki "$node" "$ip"
    addr=$(node_addr "$node") cgroup_root=/$node
  fi
  mkdir -p "$cfg" "$(node_path "$node" "$CLUSTER/cni/net.d")"
  # One bridge for the node's pods. isGateway gives cni0 the subnet's first address and routes
  # pods through it; hairpinMode lets a pod reach itself through a Service; portmap implements
  # hostPort. No ipMasq: it would hide pods' addresses from pods on other nodes; masquerade
  # (nodes.sh) lets pods reach beyond the cluster instead.
  cat >"$(node_path "$node" "$CLUSTER/cni/net.d")/10-vmctl.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "vmctl",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$CLUSTER/cni/networks",
        "ranges": [[{"subnet": "$(node_pod_cidr "$node")"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF

  cat >"$cfg/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The API server reaches the kubelet (logs, exec) at the node's InternalIP.
address: $addr
# Pods' cgroups go under <cgroupRoot>/kubepods in every hierarchy.
cgroupRoot: $cgroup_root
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
# These machines have cgroup v1 and no systemd.
failCgroupV1: false
cgroupDriver: cgroupfs
# The kubelet may not lower its own oom_score_adj here (no CAP_SYS_RESOURCE).
oomScoreAdj: 0
failSwapOn: false
# Pods resolve Service names through CoreDNS (coredns.yaml).
clusterDNS: [$DNS_IP]
clusterDomain: $CLUSTER_DOMAIN
# No registry to pull from again: never garbage-collect images (usage never exceeds 100%),
# and evict only when the disk is really full, as development disks often are above 90%.
# make bench runs 100 launcher pods next to 100 vmctl pods on this one node.
maxPods: 250
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
EOF

  cat >"$cfg/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $PKI/$(comp kube-proxy "$node").kubeconfig}
hostnameOverride: $node
mode: iptables
# Traffic from outside the pod network to a Service gets masqueraded.
clusterCIDR: $CLUSTER_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts on the node's primary address only (not on 127.0.0.1 or every host address).
nodePortAddresses: [primary]
# Leave the host's conntrack table size and timeouts alone (zero means "do not set").
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
}

# With AUDIT=1 the API server logs every mutating request (make bench counts writes with it).
# Off by default: it slows the API server enough to skew make bench-controller's timings.
AUDIT_FLAGS=()
if [ "${AUDIT:-0}" = 1 ]; then
  AUDIT_FLAGS=(--audit-policy-file "$CFG/audit-policy.yaml" --audit-log-path "$CLUSTER/logs/audit.log"
    --audit-log-mode batch --audit-log-batch-max-wait 1s --audit-log-maxsize 500 --audit-log-maxbackup 1)
fi

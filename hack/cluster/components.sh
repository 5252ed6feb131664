# shellcheck shell=bash
# Start functions, one per component; each returns once its component is healthy.
# Sourced by up.sh after lib.sh.

# The node components take the node to run on (nodes.sh); the same configuration paths mean
# that node's files in its mount namespace.
start_containerd() {
  local node=$1 name
  name=$(comp containerd "$node")
  on_node "$node" mkdir -p "$(dirname "$CONTAINERD_SOCK")"
  start_on "$node" "$name" containerd --config "$CFG/containerd.toml"
  wait_for "$name" 30 node_ctr "$node" version
  remove_containers "$node"
}

start_etcd() {
  # Plain HTTP on loopback only. --unsafe-no-fsync: a throwaway development cluster trades
  # durability on power loss for much faster writes.
  start etcd "$BIN/etcd" --name vmctl --data-dir "$CLUSTER/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster vmctl=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn
  wait_for etcd 30 http_ok http://127.0.0.1:2379/health
}

start_apiserver() {
  local ip=$1
  # Listens on all addresses (clients on the host use 127.0.0.1) and advertises the node's
  # address: the "kubernetes" Service's endpoint must be reachable from inside pods.
  # The --requestheader-*/--proxy-client-* flags set up the aggregation layer; with
  # --enable-aggregator-routing it reaches an aggregated API server at its endpoint IPs
  # instead of needing a ClusterIP route. The node's name does not resolve in DNS, so logs and
  # exec reach the kubelet at the node's InternalIP.
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers http://127.0.0.1:2379 \
    --bind-address 0.0.0.0 --advertise-address "$ip" --secure-port 6443 \
    --tls-cert-file "$PKI/kube-apiserver.crt" --tls-private-key-file "$PKI/kube-apiserver.key" \
    --client-ca-file "$PKI/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged=true \
    --kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
    --requestheader-client-ca-file "$PKI/front-proxy-ca.crt" \
    --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
    --enable-aggregator-routing=true \
    --kubelet-preferred-address-types InternalIP "${AUDIT_FLAGS[@]}"
  wait_for kube-apiserver 60 curl -fs --max-time 2 --cacert "$PKI/ca.crt" https://127.0.0.1:6443/readyz
}

start_controller_manager() {
  local kc=$PKI/kube-controller-manager.kubeconfig
  # A single instance: no leader election. It signs CSRs with the cluster CA and gives each
  # controller its own service account (--use-service-account-credentials), as kubeadm does.
  # Its API rate (virt-controller's default is 500) is raised from 20 so that a Deployment's
  # pods are created as fast as kube-scheduler binds them, 50 a second at its default rate:
  # the kwok bench's floor of 1000 pods takes 18 s however fast the machine is.
  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address 127.0.0.1 --leader-elect=false --kube-api-qps 200 --kube-api-burst 400 \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials \
    --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR"
}

start_scheduler() {
  local kc=$PKI/kube-scheduler.kubeconfig
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$kc" --authentication-kubeconfig "$kc" --authorization-kubeconfig "$kc" \
    --bind-address 127.0.0.1 --leader-elect=false
}

start_kubelet() {
  local node=$1 name
  name=$(comp kubelet "$node")
  # --cert-dir: where it keeps its self-signed serving certificate (default /var/lib/kubelet/pki).
  start_on "$node" "$name" "$BIN/kubelet" --config "$(node_cfg "$node")/kubelet.yaml" \
    --kubeconfig "$PKI/$name.kubeconfig" --root-dir "$CLUSTER/kubelet" --cert-dir "$CLUSTER/kubelet/pki" \
    --hostname-override "$node" --node-ip "$(node_addr "$node")"
  wait_for "$name" 60 on_node "$node" curl -fs --max-time 2 http://127.0.0.1:10248/healthz
}

start_kube_proxy() {
  local node=$1 name
  name=$(comp kube-proxy "$node")
  start_on "$node" "$name" "$BIN/kube-proxy" --config "$(node_cfg "$node")/kube-proxy.yaml"
  wait_for "$name" 60 on_node "$node" curl -fs --max-time 2 http://127.0.0.1:10256/healthz
}

# start_dns deploys CoreDNS as the kube-dns Service (its image was built with the pause image).
start_dns() {
  "$(dirname "${BASH_SOURCE[0]}")/load-images.sh" "$ROOT/_out/images/coredns.tar"
  kubectl apply -f "$(dirname "${BASH_SOURCE[0]}")/coredns.yaml" >/dev/null
  log "waiting for cluster DNS"
  kubectl -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null ||
    die "CoreDNS did not become ready: kubectl -n kube-system describe pod -l k8s-app=kube-dns"
}

node_ready() {
  [ "$(kubectl --request-timeout 5s get node "${1:-$NODE_NAME}" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

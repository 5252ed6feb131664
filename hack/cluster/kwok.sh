#!/usr/bin/env bash
# Fake nodes next to the real one (make cluster-up NODES=n): kwok keeps nodes kwok-node-0..n-1
# Ready and plays the kubelet for pods bound to them. The nodes are tainted, so only pods that
# tolerate kwok.x-k8s.io/node=fake:NoSchedule land there; fake nodes beyond n are deleted.
# They carry kubevirt.io/schedulable=true: launcher pods that tolerate the taint may use them.
#   hack/cluster/kwok.sh n
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
n=${1:?usage: kwok.sh NODES}
running kube-apiserver || die "the cluster is not up: make cluster-up"

# kwok's pins live in hack/cluster/kwok/go.mod; rebuild when they change (cold: ~2 min).
if [ ! -x "$BIN/kwok" ] || [ -n "$(find "$here"/kwok/go.{mod,sum} -newer "$BIN/kwok")" ]; then
  log "building kwok"
  (cd "$here/kwok" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$BIN/kwok" sigs.k8s.io/kwok/cmd/kwok)
fi

if ! running kwok; then
  # The stock stages ship in kwok's module: nodes become Ready and keep a lease; pods become
  # Ready, complete and go away when deleted.
  stage=$(cd "$here/kwok" && go mod download -json sigs.k8s.io/kwok | jq -r .Dir)/kustomize/stage
  # config.yaml: kwok's own options (lease renewal keeps up with 1000 nodes on a busy server).
  configs=$here/kwok/config.yaml
  configs+=,$stage/node/fast/node-initialize.yaml,$stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
  configs+=,$stage/pod/fast/pod-ready.yaml,$stage/pod/fast/pod-complete.yaml,$stage/pod/fast/pod-delete.yaml
  # -v WARN: at INFO kwok logs every lease renewal (100 lines a second with 1000 nodes).
  # --cidr: fake pod IPs from the upper half of the cluster CIDR, clear of the real node's
  # pods (kwok's default would be the Service range).
  start kwok "$BIN/kwok" --kubeconfig "$PKI/kwok.kubeconfig" -c "$configs" \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds 40 --cidr 10.244.128.0/17 \
    --server-address 127.0.0.1:10247 -v WARN
  wait_for kwok 30 http_ok http://127.0.0.1:10247/healthz
fi

# Each fake node offers what a node's virt-handler advertises through its device plugins, so
# launcher pods (which request /dev/net/tun, and /dev/kvm without emulation) fit on it.
for ((i = 0; i < n; i++)); do
  cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: kwok-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, kubevirt.io/schedulable: "true"}
spec:
  taints: [{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]
status:
  allocatable: {cpu: "32", memory: 256Gi, ephemeral-storage: 1Ti, pods: "110", devices.kubevirt.io/kvm: 1k, devices.kubevirt.io/tun: 1k}
  capacity: {cpu: "32", memory: 256Gi, ephemeral-storage: 1Ti, pods: "110", devices.kubevirt.io/kvm: 1k, devices.kubevirt.io/tun: 1k}
---
EOF
done | { [ "$n" -eq 0 ] || kubectl apply -f - >/dev/null; }
for node in $(kubectl get nodes -l type=kwok -o name); do
  [ "${node#node/kwok-node-}" -lt "$n" ] || kubectl delete "$node" >/dev/null
done
# A thousand nodes take minutes to register on two cores, more with the audit log on.
[ "$n" -eq 0 ] || kubectl wait --for=condition=Ready nodes -l type=kwok --timeout=$((60 + n / 4))s >/dev/null
log "$n fake nodes Ready"

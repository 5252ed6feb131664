#!/usr/bin/env bash
# Builds the pinned tool binaries of hack/tools/go.mod into _out/tools/bin.
# Usage: hack/build-tools.sh [name...]   (default: all). Go's build cache makes a warm run a no-op.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/_out/tools/bin
mkdir -p "$bin"

kube_version=$(cd "$root/hack/tools" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$kube_version" | cut -d. -f2)
kube_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version
  -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

declare -A pkg=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [kube-proxy]=k8s.io/kubernetes/cmd/kube-proxy
  [etcd]=go.etcd.io/etcd/server/v3
  [kubectl]=k8s.io/kubernetes/cmd/kubectl
  [controller-gen]=sigs.k8s.io/controller-tools/cmd/controller-gen
  [protoc-gen-go]=google.golang.org/protobuf/cmd/protoc-gen-go
  [protoc-gen-go-grpc]=google.golang.org/grpc/cmd/protoc-gen-go-grpc
)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(etcd kube-apiserver kubectl controller-gen kube-controller-manager kube-scheduler kubelet kube-proxy)

cd "$root/hack/tools"
for n in "${names[@]}"; do
  p=${pkg[$n]:?unknown tool $n}
  flags=(-trimpath)
  case $p in k8s.io/kubernetes/*) flags+=(-ldflags "$kube_ldflags") ;; esac
  # A cold build of one Kubernetes binary takes minutes: say what is being built and how long
  # it took, so a first run is not minutes of silence.
  start=$SECONDS
  echo ">> building $n"
  CGO_ENABLED=0 go build "${flags[@]}" -o "$bin/$n" "$p"
  echo ">> built $n in $((SECONDS - start))s"
done

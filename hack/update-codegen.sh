#!/usr/bin/env bash
# Regenerates everything derived from api/ (kubevirt.io/v1, instancetype.kubevirt.io/v1beta1, migrations.kubevirt.io/v1alpha1):
# deepcopy, the typed clientset, listers, informers and apply configurations
# (k8s.io/code-generator), the CRDs in crds/ (controller-gen), and the Go code of KubeVirt's
# hook sidecar protocol from api/hooks/*/*.proto (protoc from Debian, its Go plugins pinned in
# hack/tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
module=github.com/vmctl/vmctl
export GOBIN=$root/_out/tools/bin

codegen_dir=$(cd hack/tools && go mod download -json k8s.io/code-generator | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
# shellcheck source=/dev/null
source "$codegen_dir/kube_codegen.sh"

kube::codegen::gen_helpers --boilerplate hack/boilerplate.go.txt api
kube::codegen::gen_client \
  --with-watch --with-applyconfig \
  --output-dir client --output-pkg "$module/client" \
  --boilerplate hack/boilerplate.go.txt \
  api

hack/build-tools.sh controller-gen >/dev/null
rm -f crds/kubevirt.io_*.yaml crds/instancetype.kubevirt.io_*.yaml crds/migrations.kubevirt.io_*.yaml
"$GOBIN/controller-gen" crd paths=./api/... output:crd:artifacts:config=crds
# KubeVirt users still apply kubevirt.io/v1alpha3 manifests: serve it with the v1 schema.
go run ./hack/crd-versions --also-serve v1alpha3 crds/kubevirt.io_*.yaml

if ! command -v protoc >/dev/null; then
  echo ">> installing protoc" >&2
  hack/apt-install.sh protobuf-compiler
fi
hack/build-tools.sh protoc-gen-go protoc-gen-go-grpc >/dev/null
(cd api/hooks && PATH=$GOBIN:$PATH protoc --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative ./*/*.proto)

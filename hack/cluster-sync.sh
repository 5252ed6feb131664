#!/usr/bin/env bash
# Builds the project's images, loads them into the local cluster's containerd and deploys
# manifests/. Re-running it rolls the components onto freshly built images.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export KUBECONFIG=${KUBECONFIG:-$root/_cluster/kubeconfig}
kubectl=$root/_out/tools/bin/kubectl
ns=kubevirt

make --no-print-directory images
hack/cluster/load-images.sh

# The images keep their tag across builds, so pods of an earlier sync must be restarted.
mapfile -t existed < <("$kubectl" -n $ns get deployment,daemonset -o name 2>/dev/null || true)
# The install as any cluster gets it, but for two local choices. virt-handler reaches
# launcher pods' volumes under the kubelet's root directory, which is _cluster/kubelet here.
# (The kubelet's device-plugins directory is /var/lib/kubelet/device-plugins whatever its root.)
# Both paths are the same on every real node: each of the other nodes has its own directories
# mounted there in its mount namespace (hack/cluster/nodes.sh). And virt-controller and virt-api
# run on the first node, the host, where the API server runs too, as on a control-plane node:
# the e2e and chaos suites lose the other nodes, and the control plane must survive that.
# virt-api admits hostDisk volumes, hook sidecars and downward metrics (KubeVirt's HostDisk,
# Sidecar and DownwardMetrics feature gates, off by default), as KubeVirt's own test clusters
# do: the e2e suite runs them. And the nodes share this host's
# file system, where libvirt sees a local one: a disk shared between them (a hostDisk marked
# shared) migrates only with KubeVirt's unsafeMigrationOverride.
overlay=$root/_out/manifests-local
mkdir -p "$overlay"
first_node=vmctl-node # NODE_NAME of hack/cluster/lib.sh
control_plane_patch="[{\"op\": \"add\", \"path\": \"/spec/template/spec/nodeSelector\", \"value\": {\"kubernetes.io/hostname\": \"$first_node\"}}]"
cat >"$overlay/kustomization.yaml" <<EOF
resources: [../../manifests]
patches:
- target: {kind: DaemonSet, name: virt-handler}
  patch: |-
    - op: replace
      path: /spec/template/spec/volumes/0/hostPath/path
      value: $root/_cluster/kubelet/pods
- target: {kind: Deployment, name: virt-controller}
  patch: '$control_plane_patch'
- target: {kind: Deployment, name: virt-controller}
  patch: '[{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "--unsafe-migration-override"}]'
- target: {kind: Deployment, name: virt-api}
  patch: '$control_plane_patch'
- target: {kind: Deployment, name: virt-api}
  patch: '[{"op": "add", "path": "/spec/template/spec/containers/0/args/-", "value": "--feature-gates=HostDisk,Sidecar,DownwardMetrics"}]'
EOF
# Server-side: the CRDs are larger than the 256 KiB a client-side apply can keep in its
# last-applied annotation. CRDs first: the starter instance types need theirs established.
"$kubectl" apply --server-side --force-conflicts -k crds
"$kubectl" wait --for condition=established --timeout=60s crd --all
"$kubectl" apply --server-side --force-conflicts -k "$overlay"
if [ ${#existed[@]} -gt 0 ]; then
  "$kubectl" -n $ns rollout restart "${existed[@]}"
fi
for workload in deployment/virt-controller deployment/virt-api daemonset/virt-handler; do
  "$kubectl" -n $ns rollout status "$workload" --timeout=180s
done

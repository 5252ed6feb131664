#!/usr/bin/env bash
# Imports every image tarball of _out/images (go run ./hack/imagebuilder) into the containerd of
# every running real node of the local cluster, where pods find them: there is no registry to
# pull from. The nodes import side by side, each into its own image store.
# Skips, per node, a tarball imported before whose images are all still present and whose
# content is unchanged (same size and mtime, or else the same sha256: rebuilds are reproducible).
#   hack/cluster/load-images.sh [--node NODE] [tarball...]   (default: _out/images/*.tar)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

nodes=()
if [ "${1:-}" = --node ]; then
  nodes=("$2")
  shift 2
else
  for node in "$NODE_NAME" $(extra_nodes); do
    ! running "$(comp containerd "$node")" || nodes+=("$node")
  done
fi
if [ ${#nodes[@]} -eq 0 ] || ! running "$(comp containerd "${nodes[0]}")"; then
  die "the cluster's containerd is not running: make cluster-up"
fi
shopt -s nullglob
tarballs=("$@")
[ $# -gt 0 ] || tarballs=("$ROOT"/_out/images/*.tar)
# Absolute: the other nodes' ctr runs in their mount namespace, from its root directory.
for i in "${!tarballs[@]}"; do tarballs[i]=$(realpath "${tarballs[i]}"); done

# names TARBALL: the images a docker-style tarball holds, named as containerd stores them.
names() {
  tar -xOf "$1" manifest.json | jq -r '.[].RepoTags[]' |
    sed -E 's,^([^/]+)$,library/\1,; s,^([^./:]+/),docker.io/\1,'
}

# load NODE imports the tarballs into NODE's containerd.
load() {
  local node=$1 stamps present tar stamp file sum old_file old_sum current n images
  stamps=$(node_path "$node" "$CLUSTER/containerd/imported") # next to the store it describes
  mkdir -p "$stamps"
  present=$(node_ctr "$node" images ls -q)
  for tar in "${tarballs[@]}"; do
    stamp=$stamps/$(basename "$tar") # lines: size mtime, sha256, image names
    file=$(stat -c '%s %Y' "$tar")
    if [ -f "$stamp" ]; then
      { read -r old_file; read -r old_sum; } <"$stamp"
      current=yes
      for n in $(tail -n +3 "$stamp"); do grep -qxF "$n" <<<"$present" || current=no; done
      if [ $current = yes ] && [ "$file" = "$old_file" ]; then continue; fi
      sum=$(sha256sum <"$tar" | cut -d' ' -f1)
      if [ $current = yes ] && [ "$sum" = "$old_sum" ]; then
        sed -i "1c $file" "$stamp"
        continue
      fi
    else
      sum=$(sha256sum <"$tar" | cut -d' ' -f1)
    fi
    images=$(names "$tar")
    log "importing $(basename "$tar") into $node (${images//$'\n'/ })"
    # containerd 1.6 now and then loses a layer's parent snapshot mid-import ("parent snapshot
    # ... does not exist"); a second import of the same tarball succeeds.
    node_ctr "$node" images import --all-platforms "$tar" >/dev/null ||
      { sleep 1; log "retrying the import of $(basename "$tar") into $node"; node_ctr "$node" images import --all-platforms "$tar" >/dev/null; }
    printf '%s\n%s\n%s\n' "$file" "$sum" "$images" >"$stamp"
  done
}

pids=()
for node in "${nodes[@]}"; do
  load "$node" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[ $failed = 0 ] || die "importing images failed"

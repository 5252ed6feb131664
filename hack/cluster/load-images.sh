#!/usr/bin/env bash
# Imports every image tarball of _out/images (go run ./hack/imagebuilder) into the local
# cluster's containerd, where pods find them: there is no registry to pull from.
# Skips a tarball imported before whose images are all still present and whose content is
# unchanged (same size and mtime, or else the same sha256: rebuilds are reproducible).
#   hack/cluster/load-images.sh [tarball...]   (default: _out/images/*.tar)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
running containerd || die "the cluster's containerd is not running: make cluster-up"

stamps=$CLUSTER/containerd/imported # next to the image store it describes
mkdir -p "$stamps"
shopt -s nullglob
tarballs=("$@")
[ $# -gt 0 ] || tarballs=("$ROOT"/_out/images/*.tar)
present=$(ctr images ls -q)

# names TARBALL: the images a docker-style tarball holds, named as containerd stores them.
names() {
  tar -xOf "$1" manifest.json | jq -r '.[].RepoTags[]' |
    sed -E 's,^([^/]+)$,library/\1,; s,^([^./:]+/),docker.io/\1,'
}

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
  log "importing $(basename "$tar") (${images//$'\n'/ })"
  # containerd 1.6 now and then loses a layer's parent snapshot mid-import ("parent snapshot
  # ... does not exist"); a second import of the same tarball succeeds.
  ctr images import --all-platforms "$tar" >/dev/null ||
    { sleep 1; log "retrying the import of $(basename "$tar")"; ctr images import --all-platforms "$tar" >/dev/null; }
  printf '%s\n%s\n%s\n' "$file" "$sum" "$images" >"$stamp"
done

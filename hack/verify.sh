#!/usr/bin/env bash
# Fails when `make generate` would change anything, or when Go files are not gofmt-clean.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
generated=(api client crds)

before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
cp -a "${generated[@]}" "$before/"
hack/update-codegen.sh >/dev/null
stale=0
for dir in "${generated[@]}"; do
  diff -r "$before/$dir" "$dir" >&2 || stale=1
done
if [ $stale -ne 0 ]; then
  echo "generated files were stale and have been regenerated: review and commit them" >&2
  exit 1
fi
mapfile -t gofiles < <(git ls-files --cached --others --exclude-standard '*.go')
unformatted=$(gofmt -l "${gofiles[@]}")
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2
  exit 1
fi
# The scripts: shellcheck from apt, installed on first use.
if ! command -v shellcheck >/dev/null; then
  echo ">> installing shellcheck" >&2
  hack/apt-install.sh shellcheck
fi
mapfile -t scripts < <(git ls-files --cached --others --exclude-standard 'hack/*.sh' 'hack/images/guest/*' .ci/run |
  while read -r f; do [ -f "$f" ] && head -1 "$f" | grep -Eq '^(#!.*sh|# shellcheck shell=)' && echo "$f"; done)
shellcheck -x "${scripts[@]}"
echo "verify: generated code and CRDs are current, Go code is gofmt-clean, scripts pass shellcheck"

#!/usr/bin/env bash
# Fails when `make generate` would change anything, or when Go files are not gofmt-clean.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
generated=(api client crds)

hack/update-codegen.sh >/dev/null
stale=$(git status --porcelain -- "${generated[@]}")
if [ -n "$stale" ]; then
  echo "generated files are stale; run 'make generate' and commit:" >&2
  echo "$stale" >&2
  git diff --stat -- "${generated[@]}" >&2
  exit 1
fi
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2
  exit 1
fi
echo "verify: generated code and CRDs are current"

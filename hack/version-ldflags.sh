#!/usr/bin/env bash
# Prints the -ldflags with which `make build` stamps pkg/version (virt-api's version endpoint,
# virtctl version), read from the checkout with read-only git commands. VERSION overrides the
# version: make build VERSION=v1.0.0. Outside a git checkout it prints nothing, and the
# binaries report what Go recorded, if anything.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=github.com/vmctl/vmctl/pkg/version
git rev-parse --verify -q HEAD >/dev/null 2>&1 || exit 0

commit=$(git rev-parse HEAD)
# The commit's time, not the clock's, so one checkout builds the same bytes every time (the
# images are reproducible).
date=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
state=clean
git diff-index --quiet HEAD -- || state=dirty
version=${VERSION:-}
if [ -z "$version" ]; then
  version=$(git describe --tags --match 'v[0-9]*' 2>/dev/null || echo "v0.0.0-$(git rev-parse --short=12 HEAD)")
  if [ "$state" = dirty ]; then version+="-dirty"; fi
fi
echo "-X $pkg.gitVersion=$version -X $pkg.gitCommit=$commit -X $pkg.gitTreeState=$state -X $pkg.buildDate=$date"

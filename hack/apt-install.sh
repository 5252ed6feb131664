#!/usr/bin/env bash
# apt-install.sh PACKAGE...: installs Debian packages a script needs on first use, refreshing
# apt's package lists only when the first try fails (a new machine's lists may be missing or
# stale). Waits for another apt run instead of failing on its lock.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
install() { apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "$@" >/dev/null; }
install "$@" || { apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null && install "$@"; }

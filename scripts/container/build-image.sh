#!/usr/bin/env bash
# Builds the gateway's image on a host without a registry: the Node.js base from
# make-base-image.sh (made once per machine), then Containerfile. Usage: build-image.sh [TAG]
# (default localhost/model-gateway:latest). Uses the host's npm cache (copy-on-write) and CA bundle
# when there are: a build behind a TLS-intercepting proxy needs the latter.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=podman-env.sh
. "$here/podman-env.sh"
tag="${1:-localhost/model-gateway:latest}"

started=$SECONDS
base="$("$here/make-base-image.sh" | tail -n 1)"
echo "build-image: base $base ready in $((SECONDS - started)) s" >&2

args=(--format docker --build-arg "NODE_IMAGE=$base" -f "$root/Containerfile" -t "$tag")
ca=/etc/ssl/certs/ca-certificates.crt
if [ -f "$ca" ]; then
  args+=(-v "$ca:/etc/ssl/certs/host-ca.crt:ro" --build-arg NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca.crt)
fi
if [ -d "${HOME:-/root}/.npm" ]; then
  args+=(-v "${HOME:-/root}/.npm:/root/.npm:O")
fi
built=$SECONDS
podman build "${args[@]}" "$root" >&2
size="$(podman image inspect --format '{{.Size}}' "$tag")"
echo "build-image: $tag built in $((SECONDS - built)) s, $((size / 1000000)) MB" >&2
echo "$tag"

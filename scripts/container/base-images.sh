#!/usr/bin/env bash
# Stand-ins for the images the Dockerfile and compose.yaml name, built from Debian packages (no image registry is
# reachable here): node:22-slim (trixie's nodejs, 20.19), postgres:17, redis:8 and minio/minio (s3rver). A debootstrap
# of trixie (minbase) is cached under $CACHE and each stand-in is kept in podman's store; a rerun rebuilds nothing.
# Installs podman, runc, debootstrap and podman-compose with apt when missing. Sourced by scripts/test-container.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CONTAINER_CACHE:-/var/tmp/relay-gateway-containers}"
SUITE=trixie
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

need=()
for tool in podman:podman runc:runc debootstrap:debootstrap podman-compose:podman-compose; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# podman with runc (crun fails on these hosts' cgroups), the host's network and bounded ulimits, for every podman call
# (podman-compose's too): a containers.conf of the test's own.
mkdir -p "$CACHE"
cat >"$CACHE/containers.conf" <<CONF
[containers]
netns = "host"
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$CACHE/containers.conf"
PODMAN=(podman --runtime runc)

# The CA bundle the machine's npm trusts, handed to every build without a Dockerfile naming it: mounted in each RUN
# step with a root .npmrc pointing npm at it (bind mounts are not committed to the image).
CA_FILE="${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}"
BUILD_CA=()
if [ -n "$CA_FILE" ] && [ "$CA_FILE" != null ] && [ -s "$CA_FILE" ]; then
  echo "cafile=/run/host-ca.crt" >"$CACHE/npmrc"
  BUILD_CA=(--volume "$CA_FILE:/run/host-ca.crt:ro" --volume "$CACHE/npmrc:/root/.npmrc:ro")
fi

has_image() { "${PODMAN[@]}" image exists "$1"; }

if ! has_image localhost/relay-ci/trixie-base; then
  if [ ! -s "$CACHE/$SUITE-minbase.tar" ]; then
    rm -rf "$CACHE/rootfs"
    debootstrap --variant=minbase "$SUITE" "$CACHE/rootfs" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || { tail -20 "$CACHE/debootstrap.log"; exit 1; }
    echo "deb $MIRROR $SUITE main" >"$CACHE/rootfs/etc/apt/sources.list"
    rm -rf "$CACHE"/rootfs/var/cache/apt/archives/*.deb "$CACHE"/rootfs/var/lib/apt/lists/*
    tar -C "$CACHE/rootfs" -cf "$CACHE/$SUITE-minbase.tar.tmp" . && mv "$CACHE/$SUITE-minbase.tar.tmp" "$CACHE/$SUITE-minbase.tar"
    rm -rf "$CACHE/rootfs"
  fi
  "${PODMAN[@]}" import --change 'CMD ["/bin/bash"]' "$CACHE/$SUITE-minbase.tar" localhost/relay-ci/trixie-base >/dev/null
fi

# name:tag  Containerfile under scripts/container/
stand_in() {
  local tag="$1" file="$2"
  has_image "$tag" && return 0
  echo "container: building the stand-in for $tag"
  "${PODMAN[@]}" build --pull=never --network=host "${BUILD_CA[@]}" -t "$tag" -f "$here/$file" "$here" >"$CACHE/build-$file.log" 2>&1 || { tail -30 "$CACHE/build-$file.log"; exit 1; }
}
stand_in docker.io/library/node:22-slim node.Containerfile
stand_in docker.io/library/postgres:17 postgres.Containerfile
stand_in docker.io/library/redis:8 redis.Containerfile
# s3rver from the project's own lockfile: the node stand-in with s3rver installed, answering as `minio server`.
stand_in docker.io/minio/minio:latest minio.Containerfile

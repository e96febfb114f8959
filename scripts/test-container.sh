#!/usr/bin/env bash
# npm run test:container: builds the stand-in base images (cached; scripts/container/base-images.sh), then the gateway's
# image from the Dockerfile as written (the machine's npm CA bundle mounted into the build, not named by it), then runs
# test/container/ (the image alone; compose.yaml's fleet). Prints how long each part took and the image's size.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
# shellcheck source=container/base-images.sh
source scripts/container/base-images.sh
echo "container: base images ready in $(($(date +%s) - started)) s"
built=$(date +%s)
if ! podman --runtime runc build --format docker --pull=never --network=host "${BUILD_CA[@]}" -t relay-gateway:latest . >"$CACHE/build-gateway.log" 2>&1; then
  tail -40 "$CACHE/build-gateway.log"
  exit 1
fi
size=$(podman image inspect localhost/relay-gateway:latest --format '{{.Size}}')
base=$(podman image inspect docker.io/library/node:22-slim --format '{{.Size}}')
echo "container: gateway image built in $(($(date +%s) - built)) s: $((size / 1000000)) MB ($(((size - base) / 1000000)) MB over its node:22-slim base)"
npx vitest run --config vitest.container.config.ts
echo "container: done in $(($(date +%s) - started)) s"

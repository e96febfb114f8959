# The gateway's image: a build stage compiles TypeScript and better-sqlite3, the runtime stage holds production
# dependencies and dist/ only. Runs as the unprivileged `node` user; state (SQLite database, local files, pid file)
# lives in the /data volume. Listens on 0.0.0.0:8080 (HOST / PORT override); GATEWAY_CONFIG names the config file
# (the embedded config.example.yaml by default; mount your own and point GATEWAY_CONFIG at it).
# On first start the default workspace's one-time API key and the owner's dashboard link are printed to stdout.

FROM node:22-slim AS build
# better-sqlite3 is compiled when no prebuilt binary matches (node-gyp: python3, make, g++).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's own `prepare` (the build) needs src/, which comes next; the native modules build here.
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild better-sqlite3 esbuild
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/build.mjs
COPY src src
COPY schemas schemas
# Production dependencies only, without better-sqlite3's sources and object files (its .node binary stays).
RUN node scripts/build.mjs && npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
      node_modules/better-sqlite3/build/Release/obj node_modules/better-sqlite3/build/Release/obj.target \
      node_modules/better-sqlite3/build/Release/.deps node_modules/better-sqlite3/build/deps

FROM node:22-slim
# tini as PID 1: forwards SIGTERM to node even before node has installed its handlers (PID 1 ignores signals it does
# not handle), and reaps the cluster's workers. Node itself drains on SIGTERM and exits 0.
# jemalloc for node's own allocations (socket buffers, the compiler's zones, SQLite): glibc's malloc keeps what a busy
# spell freed in its arenas (free() returns only an arena's top, and node has no malloc_trim), so a worker idle after a
# held-rate run stayed at 129-139 MiB; with jemalloc 104-106 MiB, at the same CPU a request (bench/README.md, "sixth
# session"). Linked at one path for every architecture's multiarch directory.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini libjemalloc2 \
 && ln -s "$(find /usr/lib -name libjemalloc.so.2 | head -n 1)" /usr/local/lib/libjemalloc.so.2 \
 && test -r /usr/local/lib/libjemalloc.so.2 \
 && rm -rf /var/lib/apt/lists/*
# MALLOC_ARENA_MAX: two malloc arenas a process, not eight a core, should glibc's malloc serve (LD_PRELOAD unset): about
# 10 MiB less resident a worker after a busy spell, bench/README.md "Idle RSS, fourth step"; the cluster's workers get
# it from the primary too. NODE_OPTIONS: a young generation that may grow to 32 MiB a semi-space under load (V8's default
# is 16), as `npm start` runs it: half the scavenges, 4.2 -> 2.3 us of them a request at c=32 (bench/README.md,
# eleventh session); it shrinks again when the process settles. Set NODE_OPTIONS to change it.
ENV NODE_ENV=production \
    LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 \
    MALLOC_ARENA_MAX=2 \
    NODE_OPTIONS=--max-semi-space-size=32 \
    HOST=0.0.0.0 \
    PORT=8080 \
    GATEWAY_DATA_DIR=/data \
    GATEWAY_CONFIG=/app/config.example.yaml
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json config.example.yaml ./
COPY schemas schemas
COPY catalogue catalogue
COPY channels channels
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
# Slim images have no curl: node asks /healthz itself.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# On SIGTERM the gateway stops accepting, drains requests in flight (10 s at most), and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]

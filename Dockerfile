# paydoc: Debian-based Node 22 LTS image with the same engines the set-up script installs.
# The system package list lives in system-packages.txt, read here and by bin/setup.mjs, so the
# two cannot drift.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
# The service's sources only: the local chains (devchains/), the tests and the benchmarks are for
# development, so they are neither compiled here nor in the image (test/layers.test.ts checks that
# these folders import nothing else, not even a type).
COPY core core
COPY client client
COPY tools tools
COPY checks checks
COPY operations operations
COPY workers workers
COPY server server
COPY bin bin
COPY web web
RUN npx tsc -p tsconfig.json && node dist/bin/build-assets.js && npm prune --omit=dev

FROM node:22-bookworm-slim
COPY system-packages.txt /tmp/system-packages.txt
RUN apt-get update \
 && grep -v '^#' /tmp/system-packages.txt | xargs apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* /tmp/system-packages.txt
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/package.json package.json
RUN useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin paydoc
USER 10001
# Jobs live on a RAM-backed tmpfs: mount one at /jobs (docker run --tmpfs /jobs:size=2g,mode=1777,
# or an emptyDir with medium: Memory in Kubernetes). Docker's default /dev/shm is only 64 MB.
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 TMP_DIR=/jobs/paydoc PAYMENTS=live
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini reaps any stray grandchildren of the tools and forwards SIGTERM for a graceful drain.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/bin/start.js"]

# syntax=docker/dockerfile:1
# Coffer container image: `coffer serve` as a non-root user on a read-only root filesystem.
#   docker build -t ghcr.io/coffer-dev/coffer:0.1.0 .
#   docker run --read-only -p 8080:8080 -p 8081:8081 -v coffer-data:/data ghcr.io/coffer-dev/coffer:0.1.0
# test/e2e/production-install.test.ts repeats these steps without Docker (same COPY sources,
# `npm ci --omit=dev`, then the entrypoint must answer /readyz).

# Node 24 LTS, pinned (the same release as the `node` dev dependency the npm scripts run).
ARG NODE_IMAGE=node:24.21.0-trixie-slim

# ---- build: TypeScript → dist/, the web console → dist/console (needs the dev dependencies)
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the build needs no install script (the `node` dev dependency would download a
# second Node.js that this image already has).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY console ./console
COPY scripts/bundle-client-node.ts ./scripts/
# `npm run build`'s steps (the server's tsc and its bundle of the Kubernetes client, the console), called
# directly: npm would put node_modules/.bin first on PATH, where the uninstalled `node` dev dependency shadows
# the image's Node.js.
RUN node_modules/.bin/tsc -p tsconfig.build.json && node scripts/bundle-client-node.ts && node_modules/.bin/vite build --config console/vite.config.ts --logLevel warn

# ---- deps: production dependencies only
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- runtime
FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="coffer" \
      org.opencontainers.image.description="Kubernetes-native secrets manager: an Infisical-compatible secrets API and an in-process operator that syncs secrets into native Kubernetes Secrets" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/coffer-dev/coffer" \
      org.opencontainers.image.url="https://github.com/coffer-dev/coffer" \
      org.opencontainers.image.documentation="https://github.com/coffer-dev/coffer#install-on-kubernetes" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="Coffer"

# A fixed non-root uid/gid (10001) that Kubernetes runAsUser/runAsNonRoot can check; /data is the
# only place the service writes (the embedded database and its generated keys).
RUN groupadd --system --gid 10001 coffer \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin coffer \
 && mkdir -p /data \
 && chown 10001:10001 /data \
 && chmod 0700 /data

WORKDIR /app
ENV NODE_ENV=production \
    COFFER_HOST=0.0.0.0 \
    COFFER_DATA_DIR=/data
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

USER 10001:10001
VOLUME ["/data"]
EXPOSE 8080 8081
ENTRYPOINT ["node", "bin/coffer.js"]
CMD ["serve"]

# syntax=docker/dockerfile:1
# The Partner Tags API server: multi-stage, runs as the unprivileged `node` user.
#   docker build -t partner-tags .
#   docker run -p 3000:3000 -e DATABASE_URL=postgres://user:pass@db:5432/partner_tags partner-tags
# Without DATABASE_URL it uses the embedded PGlite in /data (mount a volume there).
# UNTESTED in this repository's CI: no Docker engine runs there. The build steps it relies on
# (`pnpm --filter @partner/server build`, `pnpm deploy --prod` of the server plus its dist/, then
# `node dist/main.js` from the deployed directory with NODE_ENV=production) were run outside Docker.

ARG NODE_VERSION=20.20
ARG PNPM_VERSION=10.34.9

# --- build: install the workspace from the lockfile, then deploy the server with production deps only
FROM node:${NODE_VERSION}-bookworm-slim AS build
ARG PNPM_VERSION
RUN npm install -g pnpm@${PNPM_VERSION}
WORKDIR /repo
# Manifests first: the dependency layer is cached until a manifest or the lockfile changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY patches patches
COPY packages/server/package.json packages/server/
COPY packages/shared-schemas/package.json packages/shared-schemas/
COPY packages/sdk/package.json packages/sdk/
COPY examples/rest-curl/package.json examples/rest-curl/
COPY examples/sdk-quickstart/package.json examples/sdk-quickstart/
COPY examples/trpc-client/package.json examples/trpc-client/
RUN pnpm install --frozen-lockfile --filter @partner/server... --ignore-scripts
COPY tsconfig.base.json ./
COPY packages/server packages/server
COPY packages/shared-schemas packages/shared-schemas
# The server runs compiled: one ESM bundle in dist/ (tsup; migrations and the tag script beside it).
# dist/ is git-ignored, so deploy leaves it out: it is copied in. tsx stays a production dependency
# for the operator CLI (`partner`, bin/partner.mjs).
RUN pnpm --filter @partner/server build \
 && pnpm --filter @partner/server deploy --prod --legacy /out \
 && rm -rf /out/dist && cp -r packages/server/dist /out/dist \
 && rm -rf /out/test /out/vitest.config.ts /out/drizzle.config.ts /out/tsup.config.ts

# --- runtime: only the deployed server, owned by root, run by `node`
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /out /app
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM finishes in-flight requests, then closes the database (src/main.ts).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]

# syntax=docker/dockerfile:1
# One image recipe for the four services: `docker build --build-arg SERVICE=edge-ingest .`
# Node 24 runs the TypeScript sources directly (type stripping), so the "build" is the pruned
# production install of one workspace plus its sources; the container starts node itself (not
# npm, which would swallow SIGTERM), as the unprivileged `node` user.
ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS deps
ARG SERVICE
RUN test -n "${SERVICE}" || (echo "build arg SERVICE is required" && exit 1)
WORKDIR /app
COPY package.json package-lock.json ./
COPY shared/package.json shared/package.json
COPY services/edge-ingest/package.json services/edge-ingest/package.json
COPY services/portal-api/package.json services/portal-api/package.json
COPY services/upsert-worker/package.json services/upsert-worker/package.json
COPY services/webhook-dispatcher/package.json services/webhook-dispatcher/package.json
# production dependencies of this one workspace (and the shared workspace it links)
RUN npm ci --omit=dev --workspace "services/${SERVICE}" --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ARG SERVICE
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json ./
COPY --chown=node:node shared ./shared
COPY --chown=node:node services/${SERVICE} ./services/${SERVICE}
# the entry point names the service once, so CMD stays a fixed exec-form command
RUN printf 'import "./services/%s/src/server.ts"\n' "${SERVICE}" > /app/main.mjs && chown node:node /app/main.mjs
USER node
EXPOSE 8080
ENV PORT=8080
CMD ["node", "main.mjs"]

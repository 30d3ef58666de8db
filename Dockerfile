# One image recipe for the four services: `docker build --build-arg SERVICE=edge-ingest .`
# Node 24 runs the TypeScript sources directly (type stripping), so the "build" is the pruned
# production install of one workspace plus its sources; the container starts node itself (not
# npm, which would swallow SIGTERM), as the unprivileged `node` user.
#
# The base image is the Node version the tests run on: the tag equals the `node` devDependency
# in package.json (test/infra/build-config.test.ts checks it), and the digest pins the exact
# multi-platform image of that tag (docs/deploy.md, "Base image", says how to move both).
ARG NODE_IMAGE=node:24.21.0-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6

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
# Code and dependencies stay owned by root: the service user can read them but write nothing in
# /app. A service wired by mistake to a file-backed (embedded) backend is refused by its config
# check at start-up in production instead of writing next to its code.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY shared ./shared
COPY services/${SERVICE} ./services/${SERVICE}
# the entry point names the service once, so CMD stays a fixed exec-form command
RUN printf 'import "./services/%s/src/server.ts"\n' "${SERVICE}" > /app/main.mjs
USER node
EXPOSE 8080
ENV PORT=8080
CMD ["node", "main.mjs"]

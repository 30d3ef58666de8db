import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'

/** portal-api as the composition root runs it (server.ts, the local stack, the OpenAPI generator). */
// the app (fastify, routes, schemas) is loaded when built: a background thread of the local
// stack and the process itself load their modules at the same time instead of one after the other
export const portalApi: ServiceDefinition = {
  name: 'portal-api',
  defaultPort: 8081,
  localPortVariable: 'PORTAL_PORT',
  build: async (deps, options) => (await import('./app.ts')).buildApp(deps, options),
}

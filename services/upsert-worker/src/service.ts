import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'

/**
 * upsert-worker as the composition root runs it; what runs in the background is backgroundFor()'s
 * decision (shared/src/platform/background.ts).
 */
export const upsertWorker: ServiceDefinition = {
  // the app (fastify, routes, schemas) and the background are loaded when needed, where they
  // run: the local stack starts its background threads first, and they load their modules while
  // the main thread loads the apps
  name: 'upsert-worker',
  defaultPort: 8082,
  localPortVariable: 'UPSERT_WORKER_PORT',
  build: async (deps, options) => (await import('./app.ts')).buildApp(deps, options),
  backgroundModule: new URL('./background.ts', import.meta.url).href,
}

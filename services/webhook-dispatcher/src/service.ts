import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'

/**
 * webhook-dispatcher as the composition root runs it; what runs in the background is
 * backgroundFor()'s decision (shared/src/platform/background.ts).
 */
export const webhookDispatcher: ServiceDefinition = {
  // the app (fastify, routes, schemas) and the background are loaded when needed, where they
  // run: the local stack starts its background threads first, and they load their modules while
  // the main thread loads the apps
  name: 'webhook-dispatcher',
  defaultPort: 8083,
  localPortVariable: 'WEBHOOK_DISPATCHER_PORT',
  build: async (deps, options) => (await import('./app.ts')).buildApp(deps, options),
  backgroundModule: new URL('./background.ts', import.meta.url).href,
}

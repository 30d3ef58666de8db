import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'
import { startDispatcherBackground } from './background.ts'

/**
 * webhook-dispatcher as the composition root runs it; what runs in the background is
 * backgroundFor()'s decision (shared/src/platform/background.ts).
 */
export const webhookDispatcher: ServiceDefinition = {
  name: 'webhook-dispatcher', defaultPort: 8083, localPortVariable: 'WEBHOOK_DISPATCHER_PORT', build: buildApp, background: startDispatcherBackground,
  // the local stack runs the background on a worker thread, which loads this definition from here
  module: import.meta.url,
}

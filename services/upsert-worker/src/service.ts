import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'
import { upsertWorkerBackground } from './background.ts'

/**
 * upsert-worker as the composition root runs it; what runs in the background is backgroundFor()'s
 * decision (shared/src/platform/background.ts).
 */
export const upsertWorker: ServiceDefinition = {
  name: 'upsert-worker', defaultPort: 8082, localPortVariable: 'UPSERT_WORKER_PORT', build: buildApp, background: upsertWorkerBackground,
  // the local stack runs the background on a worker thread, which loads this definition from here
  module: import.meta.url,
}

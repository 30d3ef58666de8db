import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'
import { startUpsertWorkerBackground } from './background.ts'

await serve({
  name: 'upsert-worker',
  defaultPort: 8082,
  build: buildApp,
  // with Pub/Sub, production delivers by push (POST /pubsub/contact-batches); locally the embedded queue is pulled
  background: async (deps) => (deps.config.queueBackend === 'embedded' ? [await startUpsertWorkerBackground(deps)] : []),
})

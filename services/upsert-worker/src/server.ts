import { startTelemetry } from '@lsv/shared/platform/telemetry.ts'

// before fastify, undici and the Google clients load: the instrumentations patch them as they load
await startTelemetry('upsert-worker')
const { serve } = await import('@lsv/shared/platform/serve.ts')
const { upsertWorker } = await import('./service.ts')
await serve(upsertWorker)

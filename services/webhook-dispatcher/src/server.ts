import { startTelemetry } from '@lsv/shared/platform/telemetry.ts'

// before fastify, undici and the Google clients load: the instrumentations patch them as they load
await startTelemetry('webhook-dispatcher')
const { serve } = await import('@lsv/shared/platform/serve.ts')
const { webhookDispatcher } = await import('./service.ts')
await serve(webhookDispatcher)

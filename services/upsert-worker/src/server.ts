import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'
import { upsertWorkerBackground } from './background.ts'

// what runs in the background is backgroundFor()'s decision (shared/src/platform/background.ts)
await serve({ name: 'upsert-worker', defaultPort: 8082, build: buildApp, background: upsertWorkerBackground })

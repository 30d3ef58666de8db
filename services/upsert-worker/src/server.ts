import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'

await serve({ name: 'upsert-worker', defaultPort: 8082, build: buildApp })

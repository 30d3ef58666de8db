import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'

await serve({ name: 'edge-ingest', defaultPort: 8080, build: buildApp })

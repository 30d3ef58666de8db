import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'

await serve({ name: 'portal-api', defaultPort: 8081, build: buildApp })

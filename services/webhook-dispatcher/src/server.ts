import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'
import { startDispatcherBackground } from './background.ts'

await serve({ name: 'webhook-dispatcher', defaultPort: 8083, build: buildApp, background: startDispatcherBackground })

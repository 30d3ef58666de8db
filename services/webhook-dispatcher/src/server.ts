import { serve } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'
import { startDispatcherBackground } from './background.ts'

// what runs in the background is backgroundFor()'s decision (shared/src/platform/background.ts)
await serve({ name: 'webhook-dispatcher', defaultPort: 8083, build: buildApp, background: startDispatcherBackground })

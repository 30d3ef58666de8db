import { serve } from '@lsv/shared/platform/serve.ts'
import { webhookDispatcher } from './service.ts'

await serve(webhookDispatcher)

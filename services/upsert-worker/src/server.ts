import { serve } from '@lsv/shared/platform/serve.ts'
import { upsertWorker } from './service.ts'

await serve(upsertWorker)

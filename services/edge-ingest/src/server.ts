import { serve } from '@lsv/shared/platform/serve.ts'
import { edgeIngest } from './service.ts'

await serve(edgeIngest)

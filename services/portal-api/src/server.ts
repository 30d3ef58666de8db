import { serve } from '@lsv/shared/platform/serve.ts'
import { portalApi } from './service.ts'

await serve(portalApi)

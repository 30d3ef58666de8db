import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'

/** portal-api as the composition root runs it (server.ts, the local stack, the OpenAPI generator). */
export const portalApi: ServiceDefinition = { name: 'portal-api', defaultPort: 8081, localPortVariable: 'PORTAL_PORT', build: buildApp }

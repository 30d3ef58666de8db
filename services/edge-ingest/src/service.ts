import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import { buildApp } from './app.ts'

/** edge-ingest as the composition root runs it (server.ts, the local stack, the OpenAPI generator). */
export const edgeIngest: ServiceDefinition = { name: 'edge-ingest', defaultPort: 8080, localPortVariable: 'EDGE_PORT', build: buildApp }

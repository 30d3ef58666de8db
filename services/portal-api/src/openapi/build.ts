import pino from 'pino'
import swagger from '@fastify/swagger'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import { SECURITY_SCHEMES } from '@lsv/shared/contract/security.ts'
import { CONTRACT_VERSION } from '@lsv/shared/contract/version.ts'
import { sortKeysDeep } from '@lsv/shared/contract/canonical-json.ts'
import { registerPortalRoutes } from '../routes/index.ts'
import { registerPushRoutes } from '../../../edge-ingest/src/routes/push.ts'
import { createStandInDeps } from './stand-in-deps.ts'
import { assignEdgeServers, EDGE_SERVER, PORTAL_SERVER } from './servers.ts'
import { contractComponentSchemas, outboundWebhooks } from './webhooks.ts'

export const OPENAPI_VERSION = '3.1.0'
export const API_REFERENCE_VERSION = 'v1'

interface OpenApiDoc {
  paths?: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

/**
 * The OpenAPI 3.1.0 description of the whole interface, generated from the route schemas: the
 * portal routes and the edge push routes are registered on one base app (same validator as the
 * services) with stand-in deps, and @fastify/swagger describes them. Deterministic: keys sorted.
 */
export async function buildOpenApiDocument(): Promise<object> {
  const app = buildBaseApp({ logger: pino({ level: 'silent' }) })
  await app.register(swagger, {
    openapi: {
      openapi: OPENAPI_VERSION,
      info: {
        title: 'Contact Ingestion, Link Minting and Outbound Event API',
        version: API_REFERENCE_VERSION,
        description: `Contract ${CONTRACT_VERSION}. The contract's JSON Schema document is served by \`GET /api/v1/schema\`.`,
      },
      servers: [PORTAL_SERVER, EDGE_SERVER],
      components: { securitySchemes: SECURITY_SCHEMES as never },
    },
  })
  const deps = createStandInDeps()
  registerPortalRoutes(app, deps)
  registerPushRoutes(app, deps)
  try {
    await app.ready()
    const doc = structuredClone(app.swagger()) as OpenApiDoc
    assignEdgeServers(doc)
    const components = (doc.components ?? {}) as Record<string, Record<string, unknown>>
    components.schemas = { ...contractComponentSchemas(), ...components.schemas }
    doc.components = components
    doc.webhooks = outboundWebhooks()
    return sortKeysDeep(doc)
  } finally {
    await app.close()
  }
}

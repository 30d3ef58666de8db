import pino from 'pino'
import swagger from '@fastify/swagger'
import { buildBaseApp } from '@lsv/shared/http/base-app.ts'
import { SECURITY_SCHEMES } from '@lsv/shared/contract/security.ts'
import { CONTRACT_VERSION } from '@lsv/shared/contract/version.ts'
import { sortKeysDeep } from '@lsv/shared/contract/canonical-json.ts'
import { registerPortalRoutes } from '../routes/index.ts'
import { registerPushRoutes } from '../../../edge-ingest/src/routes/push.ts'
import { createStandInDeps } from './stand-in-deps.ts'
import { assignServers, EDGE_SERVER, openApiPath, PORTAL_SERVER, routeKey, type Host } from './servers.ts'
import { outboundWebhooks } from './webhooks.ts'
import { namedComponentSchemas, refNamedSchemas } from './components.ts'

export const OPENAPI_VERSION = '3.1.0'
export const API_REFERENCE_VERSION = 'v1'

interface OpenApiDoc {
  paths?: Record<string, Record<string, unknown>>
  webhooks?: Record<string, unknown>
  components?: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

/**
 * The OpenAPI 3.1.0 description of the whole interface, generated from the route schemas: the
 * portal routes and the edge push routes are registered on one base app (same validator as the
 * services) with stand-in deps, and @fastify/swagger describes them. Deterministic: keys sorted.
 *
 * - servers: each operation names the one host whose app registers its route (recorded while
 *   registering), so a client never sends a portal call to the edge or the reverse;
 * - components: a route schema titled like a component (Contact, ContactList, the failure
 *   envelopes) becomes a `$ref` to it, so generated clients get the named types.
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
      components: { securitySchemes: SECURITY_SCHEMES },
    },
  })
  const deps = createStandInDeps()
  const hostOf = new Map<string, Host>()
  let registering: Host = 'portal'
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) hostOf.set(routeKey(method, openApiPath(route.url)), registering)
  })
  registerPortalRoutes(app, deps)
  registering = 'edge'
  registerPushRoutes(app, deps)
  try {
    await app.ready()
    const doc = structuredClone(app.swagger()) as OpenApiDoc
    assignServers(doc, hostOf)
    const named = namedComponentSchemas()
    const names = new Set(Object.keys(named))
    const components = doc.components ?? {}
    const schemas = { ...named, ...components.schemas }
    components.schemas = Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, refNamedSchemas(schema, names, true)]))
    doc.components = components
    doc.paths = refNamedSchemas(doc.paths, names) as OpenApiDoc['paths']
    doc.webhooks = outboundWebhooks()
    return sortKeysDeep(doc)
  } finally {
    await app.close()
  }
}

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import swagger, { type SwaggerOptions } from '@fastify/swagger'
import { loadConfig } from '@lsv/shared/config/config.ts'
import { createPlatformDeps } from '@lsv/shared/platform/deps.ts'
import type { ServiceDefinition } from '@lsv/shared/platform/serve.ts'
import type { App } from '@lsv/shared/http/base-app.ts'
import { SECURITY_SCHEMES } from '@lsv/shared/contract/security.ts'
import { CONTRACT_VERSION } from '@lsv/shared/contract/version.ts'
import { sortKeysDeep } from '@lsv/shared/contract/canonical-json.ts'
import { portalApi } from '../../../services/portal-api/src/service.ts'
import { edgeIngest } from '../../../services/edge-ingest/src/service.ts'
import { assignServers, EDGE_SERVER, openApiPath, PORTAL_SERVER, routeKey, type Host } from './servers.ts'
import { outboundWebhooks } from './webhooks.ts'
import { namedComponentSchemas, refNamedSchemas } from './components.ts'

const OPENAPI_VERSION = '3.1.0'
const API_REFERENCE_VERSION = 'v1'

interface OpenApiDoc {
  paths?: Record<string, Record<string, unknown>>
  webhooks?: Record<string, unknown>
  components?: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

/** the hosts of the interface and the service that serves each (the worker and dispatcher serve only Google) */
const HOSTS: ReadonlyArray<[Host, ServiceDefinition]> = [
  ['portal', portalApi],
  ['edge', edgeIngest],
]

/**
 * The OpenAPI 3.1.0 description of the whole interface, generated from the route schemas of the
 * apps themselves: portal-api and edge-ingest are built by their service definitions (as the
 * composition root builds them, on embedded adapters in a temporary folder), @fastify/swagger
 * registered on each before its routes, and their operations joined. Deterministic: keys sorted.
 *
 * - servers: each operation names the one host whose app registers its route, so a client never
 *   sends a portal call to the edge or the reverse;
 * - components: a route schema titled like a component (Contact, ContactList, the failure
 *   envelopes) becomes a `$ref` to it, so generated clients get the named types.
 */
export async function buildOpenApiDocument(): Promise<object> {
  const options: SwaggerOptions = {
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
  }
  const dir = mkdtempSync(join(tmpdir(), 'lsv-openapi-'))
  const deps = await createPlatformDeps(
    loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, STORE_BACKEND: 'embedded', QUEUE_BACKEND: 'embedded' }),
    pino({ level: 'silent' }),
  )
  const hostOf = new Map<string, Host>()
  const apps: App[] = []
  try {
    let doc: OpenApiDoc | null = null
    for (const [host, service] of HOSTS) {
      const app = await service.build(deps, {
        async beforeRoutes(app) {
          await app.register(swagger, options)
          app.addHook('onRoute', (route) => {
            if (route.schema?.hide) return
            for (const method of [route.method].flat()) hostOf.set(routeKey(method, openApiPath(route.url)), host)
          })
        },
      })
      apps.push(app)
      await app.ready()
      const part = structuredClone(app.swagger()) as OpenApiDoc
      if (!doc) doc = part
      else {
        for (const [path, item] of Object.entries(part.paths ?? {})) {
          if (doc.paths?.[path]) throw new Error(`OpenAPI generation: ${path} is served by two hosts`)
          doc.paths = { ...doc.paths, [path]: item }
        }
      }
    }
    if (!doc) throw new Error('OpenAPI generation: no host')
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
    for (const app of apps) await app.close()
    await deps.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

import { sortKeysDeep } from '@lsv/shared/contract/canonical-json.ts'
import { EDGE_SERVER, type Host, PORTAL_SERVER } from './servers.ts'

/**
 * One OpenAPI document per host, derived from the whole one (docs/contract.md, "A document per
 * host"), for the code generators that read only the top-level `servers` (orval, hey-api) and
 * send a credential for every scheme an operation lists (hey-api):
 * - `servers`: that host alone, at the top; operations carry none of their own;
 * - paths: only the operations that host serves; `webhooks` (the outbound event) only in the
 *   portal's, where integrations are configured;
 * - security: one requirement per credential, the preferred form. `x-api-key` (the bearer key's
 *   equivalent) and `?token=` (the header token's fallback) are still accepted by the service
 *   (contract section 5), but a generated client that sent both forms of the key would be
 *   answered 401 ("present exactly one"), so they are not listed;
 * - components: only those the remaining document references.
 */

/** an alternative form -> the preferred form it stands in for (contract section 5) */
const ALTERNATIVE_OF: Readonly<Record<string, string>> = { apiKeyHeader: 'bearerKey', webhookTokenQuery: 'webhookTokenHeader' }

const SERVER_OF: Record<Host, typeof PORTAL_SERVER | typeof EDGE_SERVER> = { portal: PORTAL_SERVER, edge: EDGE_SERVER }
const HOST_TITLE: Record<Host, string> = { portal: 'portal', edge: 'edge host' }

type Requirement = Record<string, string[]>
interface Doc {
  info: Record<string, unknown>
  paths: Record<string, Record<string, Record<string, unknown>>>
  webhooks?: Record<string, unknown>
  components: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown>; [k: string]: unknown }
  [key: string]: unknown
}

/** The requirements without those whose every scheme is an alternative of a scheme listed on its own. */
function preferredSecurity(security: readonly Requirement[]): Requirement[] {
  const alone = new Set(security.filter((r) => Object.keys(r).length === 1).map((r) => Object.keys(r)[0]!))
  return security.filter((r) => {
    const names = Object.keys(r)
    return names.length === 0 || !names.every((n) => ALTERNATIVE_OF[n] !== undefined && alone.has(ALTERNATIVE_OF[n]!))
  })
}

/** every `#/components/<kind>/<name>` reachable from `roots`, following references inside components */
function reachableComponents(roots: unknown, components: Doc['components']): Set<string> {
  const seen = new Set<string>()
  const visit = (node: unknown): void => {
    JSON.stringify(node, (key, value) => {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/') && !seen.has(value)) {
        seen.add(value)
        const [kind, name] = value.slice('#/components/'.length).split('/')
        visit((components[kind!] as Record<string, unknown> | undefined)?.[name!])
      }
      return value
    })
  }
  visit(roots)
  return seen
}

export function hostOpenApiDocument(whole: object, host: Host): object {
  const doc = structuredClone(whole) as Doc
  const server = SERVER_OF[host]
  const paths: Doc['paths'] = {}
  const usedSchemes = new Set<string>()
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const servers = operation.servers as Array<{ url: string }> | undefined
      if (servers?.[0]?.url !== server.url) continue
      delete operation.servers
      if (Array.isArray(operation.security)) {
        operation.security = preferredSecurity(operation.security as Requirement[])
        for (const requirement of operation.security as Requirement[]) for (const name of Object.keys(requirement)) usedSchemes.add(name)
      }
      paths[path] = { ...paths[path], [method]: operation }
    }
  }
  const webhooks = host === 'portal' ? doc.webhooks : undefined
  const reachable = reachableComponents({ paths, webhooks }, doc.components)
  const schemas = Object.fromEntries(Object.entries(doc.components.schemas ?? {}).filter(([name]) => reachable.has(`#/components/schemas/${name}`)))
  const securitySchemes = Object.fromEntries(Object.entries(doc.components.securitySchemes ?? {}).filter(([name]) => usedSchemes.has(name)))
  return sortKeysDeep({
    ...doc,
    info: {
      ...doc.info,
      title: `${String(doc.info.title)} (${HOST_TITLE[host]})`,
      description: `${String(doc.info.description)} The operations served by the ${HOST_TITLE[host]} only, for code generators; the whole interface is \`GET /api/v1/openapi.json\`. Each operation lists one credential form: the service also accepts the equivalent \`x-api-key\` header for the bearer key and the \`token\` query parameter for the \`x-webhook-token\` header (send exactly one).`,
    },
    servers: [server],
    paths,
    webhooks,
    components: { ...doc.components, schemas, securitySchemes },
  })
}

/**
 * The two hosts of the interface (contract: `{portal_base_url}` and `{edge_base_url}`) as
 * OpenAPI server variables. Every operation names exactly the one host that serves it: the
 * generator records which app registered each route (build.ts) and assignServers writes it.
 */
export const PORTAL_SERVER = {
  url: '{portal_base_url}',
  description: 'the portal origin: contract schema, link minting, read contract, management API, deprecated push fallbacks',
  variables: { portal_base_url: { default: 'https://portal.example.com', description: 'absolute origin of the portal' } },
}

export const EDGE_SERVER = {
  url: '{edge_base_url}',
  description: "the edge host; its first host label is the account's public id `<customer_public_id>`",
  variables: {
    edge_base_url: { default: 'https://customer-public-id.edge.example.com', description: "absolute origin of the account's edge host" },
  },
}

export type Host = 'portal' | 'edge'
const SERVER_OF: Record<Host, typeof PORTAL_SERVER | typeof EDGE_SERVER> = { portal: PORTAL_SERVER, edge: EDGE_SERVER }

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

/** A fastify route path (`/v1/contacts/:sourceId`) as an OpenAPI path (`/v1/contacts/{sourceId}`). */
export function openApiPath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/** `POST /v1/contacts` -> the key used by routeKey and assignServers. */
export function routeKey(method: string, openApiPathName: string): string {
  return `${method.toUpperCase()} ${openApiPathName}`
}

/**
 * Gives every operation `servers: [<its host>]` (in place), from `hostOf` (routeKey -> host).
 * An operation whose host is unknown is a generator bug: it throws rather than guess.
 */
export function assignServers(doc: { paths?: Record<string, Record<string, unknown>> }, hostOf: ReadonlyMap<string, Host>): void {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item[method] as Record<string, unknown> | undefined
      if (!operation) continue
      const host = hostOf.get(routeKey(method, path))
      if (!host) throw new Error(`OpenAPI generation: no app registered ${routeKey(method, path)}`)
      operation.servers = [SERVER_OF[host]]
    }
  }
}

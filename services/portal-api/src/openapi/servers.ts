/**
 * The two hosts of the interface (contract: `{portal_base_url}` and `{edge_base_url}`) as
 * OpenAPI server variables. The document lists both; edge paths name only the edge host.
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

/** Edge operations live under `/v1/...` and are served by the edge host only. */
export function isEdgePath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/')
}

/** Gives every edge path item a path-level `servers` entry for the edge host (in place). */
export function assignEdgeServers(doc: { paths?: Record<string, Record<string, unknown>> }): void {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (isEdgePath(path)) item.servers = [EDGE_SERVER]
  }
}

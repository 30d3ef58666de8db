/**
 * A consumer program for the per-host documents (docs/contract.md, "A document per host"),
 * compiled against the types openapi-typescript generated from openapi.portal.json and
 * openapi.edge.json, and run by Node in its own process. It does what orval and hey-api do:
 * - the base URL is the document's top-level `servers[0].url`, fetched from
 *   `GET /api/v1/openapi.json?host=…` (per-operation `servers` are not read);
 * - the credential goes into every scheme the operation's `security` lists, as hey-api's
 *   generated `setAuthParams` does (for each listed scheme: bearer -> `Authorization: Bearer`,
 *   apiKey -> its header or query parameter, the same secret each time).
 * It prints one JSON line. Environment: PORTAL_URL, PUBLIC_ID, API_KEY, SOURCE_ID, SOURCE_TOKEN,
 * and DOCUMENT=whole (with EDGE_URL) to read the whole document (openapi.json) instead: the
 * comparison that shows why the per-host documents exist.
 *
 * Edge host names are not in DNS here: the edge client connects through an undici Agent whose
 * lookup maps exactly the edge host to 127.0.0.1 and refuses every other name.
 */
export const HOST_RUNTIME_SCRIPT = `import createClient, { type Middleware } from 'openapi-fetch'
import { Agent, fetch as undiciFetch } from 'undici'
import type { paths as PortalPaths } from './portal-api'
import type { paths as EdgePaths } from './edge-api'

function env(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(name + ' is not set')
  return value
}

type Scheme = { type: string; scheme?: string; in?: string; name?: string }
type Doc = { servers?: Array<{ url: string }>; paths: Record<string, Record<string, { security?: Array<Record<string, string[]>>; servers?: Array<{ url: string }> }>>; components: { securitySchemes: Record<string, Scheme> } }

const whole = process.env.DOCUMENT === 'whole'
const portalUrl = env('PORTAL_URL')
async function document(query: string): Promise<Doc> {
  const res = await fetch(portalUrl + '/api/v1/openapi.json' + (whole ? '' : query))
  if (res.status !== 200) throw new Error('document: ' + res.status)
  return (await res.json()) as Doc
}
const portalDoc = await document('?host=portal')
const edgeDoc = await document('?host=edge&account=' + env('PUBLIC_ID'))

/** hey-api: every scheme of every listed requirement gets the credential */
function authMiddleware(doc: Doc, secret: string): Middleware {
  return {
    async onRequest({ request, schemaPath }) {
      const operation = doc.paths[schemaPath]?.[request.method.toLowerCase()]
      const url = new URL(request.url)
      for (const requirement of operation?.security ?? []) {
        for (const name of Object.keys(requirement)) {
          const scheme = doc.components.securitySchemes[name]!
          if (scheme.type === 'http' && scheme.scheme === 'bearer') request.headers.set('authorization', 'Bearer ' + secret)
          else if (scheme.type === 'apiKey' && scheme.in === 'header') request.headers.set(scheme.name!, secret)
          else if (scheme.type === 'apiKey' && scheme.in === 'query') url.searchParams.set(scheme.name!, secret)
        }
      }
      if (url.href === request.url) return request
      return new Request(url, { method: request.method, headers: request.headers, body: request.body ? await request.text() : undefined })
    },
  }
}

// the whole document's top-level servers are variables (and list both hosts): there the test gives the URLs
const edgeBase = new URL(whole ? env('EDGE_URL') : (edgeDoc.servers?.[0]?.url ?? 'http://no-top-level-server.invalid'))
const portalBase = whole ? portalUrl : portalDoc.servers?.[0]?.url
const loopbackOnly = new Agent({
  connect: {
    lookup(hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) {
      if (hostname !== edgeBase.hostname) return callback(Object.assign(new Error('refused: ' + hostname), { code: 'ENOTFOUND' }))
      if (options.all) return callback(null, [{ address: '127.0.0.1', family: 4 }])
      return callback(null, '127.0.0.1', 4)
    },
  } as never,
})
async function edgeFetch(request: Request): Promise<Response> {
  const body = request.body ? await request.arrayBuffer() : undefined
  const res = await undiciFetch(request.url, { method: request.method, headers: [...request.headers], body, dispatcher: loopbackOnly })
  return res as unknown as Response
}

const record = (id: string) => ({ contacts: [{ external_id: id, email: id + '@example.com' }] })
const portal = createClient<PortalPaths>({ baseUrl: portalBase })
portal.use(authMiddleware(portalDoc, env('API_KEY')))
const edge = createClient<EdgePaths>({ baseUrl: edgeBase.href.replace(/\\/$/, ''), fetch: edgeFetch })
const edgeByToken = createClient<EdgePaths>({ baseUrl: edgeBase.href.replace(/\\/$/, ''), fetch: edgeFetch })
edge.use(authMiddleware(edgeDoc, env('API_KEY')))
edgeByToken.use(authMiddleware(edgeDoc, env('SOURCE_TOKEN')))

/** what was sent, read back by a middleware that runs after the auth one */
const sent: Record<string, { credentials: string[]; query: string }> = {}
const recorder = (label: string): Middleware => ({
  onRequest({ request }) {
    const credentials = ['authorization', 'x-api-key', 'x-webhook-token'].filter((h) => request.headers.has(h))
    const url = new URL(request.url)
    if (url.searchParams.has('token')) credentials.push('?token')
    sent[label] = { credentials, query: url.search }
    return request
  },
})

edge.use(recorder('push'))
const push = await edge.POST('/v1/contacts', { body: record('host-doc-1') })
edgeByToken.use(recorder('sourcePush'))
const sourcePush = await edgeByToken.POST('/v1/contacts/{sourceId}', { params: { path: { sourceId: env('SOURCE_ID') } }, body: record('host-doc-2') })
portal.use(recorder('list'))
const list = await portal.GET('/api/v1/contacts', { params: { query: { limit: 1 } } })

await loopbackOnly.close()
console.log(JSON.stringify({
  servers: { portal: portalDoc.servers?.map((s) => s.url), edge: edgeDoc.servers?.map((s) => s.url) },
  push: { status: push.response.status, data: push.data },
  sourcePush: { status: sourcePush.response.status, data: sourcePush.data },
  list: { status: list.response.status },
  sent,
}))
`

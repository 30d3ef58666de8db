/**
 * A consumer program written against the generated client (compiled with the generated calls,
 * then run by Node in its own process): it calls a listening portal and edge with openapi-fetch
 * and prints what it got as one JSON line. Environment: PORTAL_URL, EDGE_URL, API_KEY.
 *
 * The edge host is `<public_id>.<edge domain>`; those names are not in DNS here, so the edge
 * client connects through an undici Agent whose lookup maps exactly the `EDGE_URL` host to
 * 127.0.0.1 and refuses every other name (no traffic leaves loopback).
 */
export const RUNTIME_SCRIPT = `import createClient from 'openapi-fetch'
import { Agent, fetch as undiciFetch } from 'undici'
import type { paths } from './api'

function env(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(name + ' is not set')
  return value
}

const headers = { authorization: 'Bearer ' + env('API_KEY') }
const edgeUrl = new URL(env('EDGE_URL'))
const loopbackOnly = new Agent({
  connect: {
    lookup(hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) {
      if (hostname !== edgeUrl.hostname) return callback(Object.assign(new Error('refused: ' + hostname), { code: 'ENOTFOUND' }))
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

const portal = createClient<paths>({ baseUrl: env('PORTAL_URL'), headers })
const edge = createClient<paths>({ baseUrl: env('EDGE_URL'), headers, fetch: edgeFetch })

const schema = await portal.GET('/api/v1/schema')
const push = await edge.POST('/v1/contacts', {
  body: { contacts: [{ external_id: 'oc-1', email: 'Ada@Example.com', first_name: 'Ada', last_name: 'Lovelace', title: 'Analyst' }] },
})

// the batch is queued (202) and upserted by the worker: wait until the list shows it
let list = await portal.GET('/api/v1/contacts', { params: { query: { limit: 10 } } })
for (let i = 0; i < 400 && list.data && list.data.data.length === 0; i++) {
  await new Promise((r) => setTimeout(r, 50))
  list = await portal.GET('/api/v1/contacts', { params: { query: { limit: 10 } } })
}
const id = list.data?.data[0]?.id ?? 'none'
const one = await portal.GET('/api/v1/contacts/{id}', { params: { path: { id }, query: { include: 'contact_handles' } } })
const mint = await portal.POST('/api/contacts/links', { body: { destinationUrl: 'https://www.example.com/landing?utm=x', contactId: id } })
const missing = await portal.GET('/api/v1/contacts/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } })
const badMint = await portal.POST('/api/contacts/links', { body: { destinationUrl: 'https://example.com@other.example/', contactId: id } })

await loopbackOnly.close()
console.log(JSON.stringify({
  schema: { status: schema.response.status, version: schema.data?.['x-service-contract-version'], contractHeader: schema.response.headers.get('x-service-contract') },
  push: { status: push.response.status, data: push.data, error: push.error },
  list: { status: list.response.status, data: list.data },
  one: { status: one.response.status, data: one.data, fullName: one.data?.identity.full_name, email: one.data?.handles.business_email },
  mint: { status: mint.response.status, data: mint.data, error: mint.error },
  missing: { status: missing.response.status, error: missing.error },
  badMint: { status: badMint.response.status, error: badMint.error },
}))
`

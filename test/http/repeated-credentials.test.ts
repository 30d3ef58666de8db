import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createIngestFixture, type Harness, type IngestFixture } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * A credential header sent twice is a malformed credential (contract section 5: exactly one
 * credential; a present-but-malformed one answers 401 and never falls back). Node keeps only the
 * first `Authorization` and joins repeated custom headers, so "valid key, then junk" would pass;
 * the requests here really carry the header twice (node:http sends an array as repeated lines),
 * against listening servers. Each case has its control: the same request with the header once.
 */
describe('repeated credential headers answer 401', () => {
  let fixture: IngestFixture
  let h: Harness
  let t: StoredTenant
  let reader: StoredTenant
  let edgePort = 0
  let portalPort = 0

  beforeAll(async () => {
    fixture = await createIngestFixture()
    ;({ h, t } = fixture)
    reader = await createTestTenant(h.deps, { api: { key: { scopes: ['contacts:write', 'contacts:read', 'contacts:links:write'] } } })
    await h.edge.listen({ port: 0, host: '127.0.0.1' })
    await h.portal.listen({ port: 0, host: '127.0.0.1' })
    edgePort = (h.edge.server.address() as AddressInfo).port
    portalPort = (h.portal.server.address() as AddressInfo).port
  })
  afterAll(async () => {
    await reader?.cleanup()
    await fixture?.close()
  })

  function send(
    port: number,
    method: string,
    path: string,
    host: string,
    headers: Record<string, string | string[]>,
    body?: string,
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method, path, headers: { host, ...(body ? { 'content-type': 'application/json' } : {}), ...headers } },
        (res) => {
          let text = ''
          res.on('data', (d) => {
            text += d
          })
          res.on('end', () => resolve({ status: res.statusCode!, body: text }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  }
  const contacts = JSON.stringify({ contacts: [{ external_id: 'dup-1' }] })
  const junk = `Bearer lsk_${'j'.repeat(43)}`

  it('POST /v1/contacts: Authorization twice (valid first, or last), x-api-key twice', async () => {
    const edge = (headers: Record<string, string | string[]>) => send(edgePort, 'POST', '/v1/contacts', t.host, headers, contacts)
    expect((await edge({ authorization: `Bearer ${t.key}` })).status).toBe(202)
    const repeated: Array<Record<string, string[]>> = [
      { authorization: [`Bearer ${t.key}`, junk] },
      { authorization: [junk, `Bearer ${t.key}`] },
      { authorization: [`Bearer ${t.key}`, `Bearer ${t.key}`] },
      { 'x-api-key': [t.key, t.key] },
    ]
    for (const headers of repeated) {
      const res = await edge(headers)
      expect(res.status, JSON.stringify(headers)).toBe(401)
      expect(JSON.parse(res.body)).toEqual({ ok: false, error: 'unauthorized' })
    }
  })

  it('source and location tokens: x-webhook-token twice, or ?token= twice', async () => {
    const bySource = (path: string, headers: Record<string, string | string[]>) => send(edgePort, 'POST', path, t.host, headers, contacts)
    expect((await bySource(`/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': t.sourceToken })).status).toBe(202)
    expect((await bySource(`/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': [t.sourceToken, 'junk'] })).status).toBe(401)
    expect((await bySource(`/v1/contacts/${t.webhook.id}?token=${t.sourceToken}`, {})).status).toBe(202)
    expect((await bySource(`/v1/contacts/${t.webhook.id}?token=${t.sourceToken}&token=junk`, {})).status).toBe(401)
    const partner = JSON.stringify({ contactId: 'dup-p', locationId: t.locationId })
    expect((await send(edgePort, 'POST', '/v1/contacts/partnercrm', t.host, { 'x-webhook-token': t.locationToken }, partner)).status).toBe(202)
    expect((await send(edgePort, 'POST', '/v1/contacts/partnercrm', t.host, { 'x-webhook-token': [t.locationToken, 'junk'] }, partner)).status).toBe(401)
  })

  it('portal: the read API, link minting, the push fallback and the management API', async () => {
    const portal = (method: string, path: string, headers: Record<string, string | string[]>, body?: string) =>
      send(portalPort, method, path, 'localhost', headers, body)
    const key = `Bearer ${reader.key}`
    expect((await portal('GET', '/api/v1/contacts?limit=1', { authorization: key })).status).toBe(200)
    expect((await portal('GET', '/api/v1/contacts?limit=1', { authorization: [key, junk] })).status).toBe(401)
    const mint = JSON.stringify({ destinationUrl: 'https://example.com/x', source: 'crm', externalId: 'nobody' })
    expect((await portal('POST', '/api/contacts/links', { authorization: key }, mint)).status).toBe(404)
    expect((await portal('POST', '/api/contacts/links', { authorization: [key, junk] }, mint)).status).toBe(401)
    expect((await portal('POST', '/api/contacts', { authorization: key }, contacts)).status).toBe(202)
    expect((await portal('POST', '/api/contacts', { authorization: [key, junk] }, contacts)).status).toBe(401)
    const operator = 'Bearer test-operator-token'
    const accountUrl = `/api/v1/admin/accounts/${t.account.id}/connections`
    expect((await portal('GET', accountUrl, { authorization: operator })).status).toBe(200)
    expect((await portal('GET', accountUrl, { authorization: [operator, 'Bearer junk'] })).status).toBe(401)
  })
})

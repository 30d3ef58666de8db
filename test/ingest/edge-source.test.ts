import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, body, type Harness, expectError, type IngestFixture, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/** POST /v1/contacts/{sourceId} (contract 4.4). */
describe('POST /v1/contacts/{sourceId}', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  const push = (url: string, headers: Record<string, string>, payload = body([record(1)])) =>
    h.edge.inject({ method: 'POST', url, headers: { host: t.host, 'content-type': 'application/json', ...headers }, payload })

  let fixture: IngestFixture
  beforeAll(async () => {
    ;({ h, t, other } = fixture = await createIngestFixture())
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('202 with the token in x-webhook-token or in ?token=; the message names the source connection', async () => {
    const before = h.q.batches().length
    const res = await push(`/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': t.sourceToken })
    expect(res.statusCode).toBe(202)
    expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
    expect(h.q.batches()[before]!.attributes).toMatchObject({ connection_id: t.webhook.id, source: 'hooks', shape: 'contacts' })
    const query = await push(`/v1/contacts/${t.webhook.id}?token=${encodeURIComponent(t.sourceToken)}`, {})
    expect(query.statusCode).toBe(202)
  })

  it('the header wins over the query parameter when both are present', async () => {
    expect((await push(`/v1/contacts/${t.webhook.id}?token=wrong`, { 'x-webhook-token': t.sourceToken })).statusCode).toBe(202)
    expectError(await push(`/v1/contacts/${t.webhook.id}?token=${encodeURIComponent(t.sourceToken)}`, { 'x-webhook-token': 'wrong' }), 401, 'unauthorized')
    // a present but blank header never falls back to the query
    expectError(await push(`/v1/contacts/${t.webhook.id}?token=${encodeURIComponent(t.sourceToken)}`, { 'x-webhook-token': '' }), 401, 'unauthorized')
  })

  it('401 unauthorized, identical for unknown, inactive or non-webhook source and missing or wrong token', async () => {
    const inactive = await createTestTenant(h.deps)
    await h.deps.tenants.updateConnection(inactive.webhook.id, { active: false })
    const variants: Array<[string, string, Record<string, string>]> = [
      ['unknown source', '/v1/contacts/src_nope', { 'x-webhook-token': t.sourceToken }],
      ['api connection as source', `/v1/contacts/${t.api.id}`, { 'x-webhook-token': t.sourceToken }],
      ['partner connection as source', `/v1/contacts/${t.partner.id}`, { 'x-webhook-token': t.locationToken }],
      ['no token', `/v1/contacts/${t.webhook.id}`, {}],
      ['blank token', `/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': '' }],
      ['wrong token', `/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': 'lst_wrong' }],
      ['blank query token', `/v1/contacts/${t.webhook.id}?token=`, {}],
      ['token of another source', `/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': other.sourceToken }],
      ['very long id', `/v1/contacts/${'x'.repeat(3000)}`, { 'x-webhook-token': t.sourceToken }],
    ]
    try {
      for (const [name, url, headers] of variants) {
        const res = await push(url, headers)
        expect(res.statusCode, name).toBe(401)
        expect(res.body, name).toBe('{"ok":false,"error":"unauthorized"}')
      }
      // inactive source, on its own subdomain
      const res = await h.edge.inject({
        method: 'POST',
        url: `/v1/contacts/${inactive.webhook.id}`,
        headers: { host: inactive.host, 'x-webhook-token': inactive.sourceToken, 'content-type': 'application/json' },
        payload: body([record(1)]),
      })
      expectError(res, 401, 'unauthorized')
    } finally {
      await inactive.cleanup()
    }
  })

  it('403 forbidden: the source (with its valid token) belongs to another tenant than the subdomain', async () => {
    expectError(await push(`/v1/contacts/${other.webhook.id}`, { 'x-webhook-token': other.sourceToken }), 403, 'forbidden')
  })

  it('404 not found: unknown subdomain, before anything else', async () => {
    expectError(
      await push(`/v1/contacts/${t.webhook.id}`, { host: `zz-${t.publicId}.${h.deps.config.edgeDomain}`, 'x-webhook-token': t.sourceToken }),
      404,
      'not found',
    )
    expectError(await push('/v1/contacts/src_nope', { host: `zz-${t.publicId}.${h.deps.config.edgeDomain}` }), 404, 'not found')
  })

  it('400 and 413 as in 4.3', async () => {
    const url = `/v1/contacts/${t.webhook.id}`
    const auth = { 'x-webhook-token': t.sourceToken }
    expectError(await push(url, auth, '{"contacts":'), 400, 'invalid JSON body')
    expectError(await push(url, auth, '{"items":[]}'), 400, 'invalid payload')
    expectError(await push(url, auth, body(Array.from({ length: 10_001 }, (_, i) => ({ external_id: `e${i}` })))), 413, 'too many contacts')
    expectError(await push(url, auth, `{"contacts":[{"external_id":"x","pad":"${'p'.repeat(8_388_608)}"}]}`), 413, 'payload too large')
  })

  it('503 temporarily unavailable when the queue refuses', async () => {
    h.q.state.refuse = true
    try {
      expectError(await push(`/v1/contacts/${t.webhook.id}`, { 'x-webhook-token': t.sourceToken }), 503, 'temporarily unavailable')
    } finally {
      h.q.state.refuse = false
    }
  })
})

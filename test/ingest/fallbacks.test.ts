import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { buildOpenApiDocument } from '../../scripts/lib/openapi/build.ts'
import { DEPRECATION_HEADER } from '../../services/portal-api/src/routes/fallbacks.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { body, createIngestFixture, expectError, type Harness, type IngestFixture, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/** The deprecated origin fallbacks (contract 4.6). */
describe('origin fallbacks', () => {
  let h: Harness
  let t: StoredTenant
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 1))
  const post = (url: string, payload: string, headers: Record<string, string>) =>
    h.portal.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload })
  const key = () => ({ authorization: `Bearer ${t.key}` })
  const token = () => ({ 'x-webhook-token': t.sourceToken })

  let fixture: IngestFixture
  beforeAll(async () => {
    ;({ h, t } = fixture = await createIngestFixture({ clock }))
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('POST /api/contacts mirrors POST /v1/contacts: 202 queued, with a Deprecation header on every answer', async () => {
    const before = h.q.batches().length
    const res = await post('/api/contacts', body([record(1), { email: 'x@example.com' }]), key())
    expect(res.statusCode).toBe(202)
    expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
    expect(res.headers.deprecation).toBe(DEPRECATION_HEADER)
    expect(h.q.batches()[before]!.attributes).toMatchObject({ shape: 'contacts', connection_id: t.api.id })
    const denied = await post('/api/contacts', body([record(1)]), {})
    expectError(denied, 401, 'unauthorized')
    expect(denied.headers.deprecation).toBe(DEPRECATION_HEADER)
  })

  it('POST /api/contacts/webhook/{sourceId} mirrors POST /v1/contacts/{sourceId}', async () => {
    const res = await post(`/api/contacts/webhook/${t.webhook.id}`, body([record(2)]), token())
    expect(res.statusCode).toBe(202)
    expect(res.headers.deprecation).toBe(DEPRECATION_HEADER)
    expect((await post(`/api/contacts/webhook/${t.webhook.id}?token=${encodeURIComponent(t.sourceToken)}`, body([record(2)]), {})).statusCode).toBe(202)
    expectError(await post(`/api/contacts/webhook/${t.webhook.id}`, body([record(2)]), { 'x-webhook-token': 'wrong' }), 401, 'unauthorized')
    expectError(await post('/api/contacts/webhook/src_nope', body([record(2)]), token()), 401, 'unauthorized')
    expectError(await post(`/api/contacts/webhook/${'x'.repeat(3000)}`, body([record(2)]), token()), 401, 'unauthorized')
  })

  it('the same body answers as the edge: 400, 403, 413', async () => {
    expectError(await post('/api/contacts', '{"contacts":[', key()), 400, 'invalid JSON body')
    expectError(await post('/api/contacts', '{"contacts":[]}', key()), 400, 'invalid payload')
    expectError(await post('/api/contacts', '{"events":[{"nope":{}}]}', key()), 400, 'invalid payload')
    expectError(await post('/api/contacts', body(Array.from({ length: 10_001 }, (_, i) => ({ external_id: `${i}` }))), key()), 413, 'too many contacts')
    expectError(await post(`/api/contacts/webhook/${t.webhook.id}`, `{"contacts":[{"x":"${'x'.repeat(8_388_608)}"}]}`, token()), 413, 'payload too large')
    const linksOnly = await createTestTenant(h.deps, { api: { key: { scopes: ['contacts:links:write'] } } })
    try {
      expectError(await post('/api/contacts', body([record(1)]), { 'x-api-key': linksOnly.key }), 403, 'forbidden')
    } finally {
      await linksOnly.cleanup()
    }
  })

  it('only the fallbacks accept the nested {events:[{resolution}]} shape; each resolution is one record', async () => {
    const nested = JSON.stringify({ events: [{ resolution: record(3, { title: 'Nested' }) }, { resolution: { email: 'no-anchor@example.com' } }] })
    for (const [url, headers] of [
      ['/api/contacts', key()],
      [`/api/contacts/webhook/${t.webhook.id}`, token()],
    ] as const) {
      const before = h.q.batches().length
      const res = await post(url, nested, headers)
      expect(res.statusCode).toBe(202)
      expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
      const message = h.q.batches()[before]!
      expect(message.attributes.shape).toBe('events')
      expect(message.data.toString()).toBe(nested)
      expect(await handleBatchMessage(h.deps, message)).toBe('ack')
    }
    expect(await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-3')).toMatchObject({ identity: { title: 'Nested' } })
    expect(await h.deps.contacts.getByAnchor(t.account.id, 'hooks', 'ext-3')).toMatchObject({ identity: { title: 'Nested' } })
    // the edge refuses it
    const edge = await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: nested })
    expectError(edge, 400, 'invalid payload')
  })

  it('queue unavailable: both fallbacks upsert synchronously and answer 200 {ok, accepted, queued: false, upserted, failed}', async () => {
    h.q.state.refuse = true
    try {
      const push = await post('/api/contacts', body([record(90, { title: 'sync' }), { email: 'anchorless@example.com' }]), key())
      expect(push.statusCode).toBe(200)
      expect(push.json()).toEqual({ ok: true, accepted: 1, queued: false, upserted: 1, failed: 0 })
      expect(push.headers.deprecation).toBe(DEPRECATION_HEADER)
      expect(await h.deps.contacts.getByAnchor(t.account.id, 'crm', 'ext-90')).toMatchObject({ identity: { title: 'sync' }, name_source: 'manual' })
      const hook = await post(`/api/contacts/webhook/${t.webhook.id}`, JSON.stringify({ events: [{ resolution: record(91) }] }), token())
      expect(hook.statusCode).toBe(200)
      expect(hook.json()).toEqual({ ok: true, accepted: 1, queued: false, upserted: 1, failed: 0 })
      expect(await h.deps.contacts.getByAnchor(t.account.id, 'hooks', 'ext-91')).not.toBeNull()
    } finally {
      h.q.state.refuse = false
    }
  })

  it('queue and store both unavailable: 503 temporarily unavailable, never 202', async () => {
    h.q.state.refuse = true
    const upsertBatch = h.deps.contacts.upsertBatch
    h.deps.contacts.upsertBatch = async () => {
      throw new Error('store down (test)')
    }
    try {
      expectError(await post('/api/contacts', body([record(92)]), key()), 503, 'temporarily unavailable')
    } finally {
      h.deps.contacts.upsertBatch = upsertBatch
      h.q.state.refuse = false
    }
  })

  it('the push fallback shares the per-key rate limit of POST /v1/contacts; the webhook fallback has none', async () => {
    // start of a fresh 60 s window
    clock.set(Math.ceil(clock.now() / 60_000) * 60_000 + 60_000)
    const limited = await createTestTenant(h.deps)
    try {
      for (let i = 0; i < 60; i++)
        expect((await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: limited.keyHeaders(), payload: body([record(i)]) })).statusCode).toBe(202)
      for (let i = 0; i < 60; i++) expect((await post('/api/contacts', body([record(i)]), { authorization: `Bearer ${limited.key}` })).statusCode).toBe(202)
      const over = await post('/api/contacts', body([record(1)]), { authorization: `Bearer ${limited.key}` })
      expectError(over, 429, 'rate limited')
      expect(over.headers['retry-after']).toBe('60')
      for (let i = 0; i < 130; i++) {
        const res = await post(`/api/contacts/webhook/${limited.webhook.id}`, body([record(i)]), { 'x-webhook-token': limited.sourceToken })
        expect(res.statusCode).toBe(202)
      }
    } finally {
      await limited.cleanup()
    }
  })

  it('OpenAPI: both fallbacks are deprecated operations with the documented 200 body', async () => {
    const doc = (await buildOpenApiDocument()) as Record<string, any>
    for (const path of ['/api/contacts', '/api/contacts/webhook/{sourceId}']) {
      const op = doc.paths[path].post
      expect(op.deprecated, path).toBe(true)
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '202', '401', '413', '503']))
    }
    expect(doc.paths['/api/contacts/webhook/{sourceId}'].post.responses['429']).toBeUndefined()
    for (const [path, id] of [
      ['/v1/contacts', 'pushContacts'],
      ['/v1/contacts/{sourceId}', 'pushContactsBySource'],
      ['/v1/contacts/partnercrm', 'pushHighLevelContact'],
    ]) {
      const op = doc.paths[path!].post
      expect(op.operationId).toBe(id)
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '404', '413', '429', '503']))
    }
  })
})

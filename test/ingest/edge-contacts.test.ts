import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Readable } from 'node:stream'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { generateApiKey, hashSecret } from '@lsv/shared/domain/auth/hashing.ts'
import { prefixedId } from '@lsv/shared/model/ids.ts'
import { decodeBatchMessage } from '@lsv/shared/domain/ingest/batch-message.ts'
import { createIngestFixture, body, type Harness, expectError, type IngestFixture, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { TEST_PEPPER } from '../helpers/test-secrets.ts'

/** POST /v1/contacts (contract 4.3): every status and `error` text. */
describe('POST /v1/contacts', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 1))
  const push = (payload: string | Buffer | Readable, headers: Record<string, string> = t.keyHeaders()) =>
    h.edge.inject({ method: 'POST', url: '/v1/contacts', headers, payload })

  let fixture: IngestFixture
  beforeAll(async () => {
    ;({ h, t, other } = fixture = await createIngestFixture({ clock }))
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('202 {ok, accepted, queued: true} once the received bytes are queued (bearer and x-api-key)', async () => {
    const payload = `{ "contacts" : [ ${JSON.stringify(record(1))}, ${JSON.stringify(record(2))} ] }`
    const before = h.q.batches().length
    const res = await push(payload)
    expect(res.statusCode).toBe(202)
    expect(res.json()).toEqual({ ok: true, accepted: 2, queued: true })
    const message = h.q.batches()[before]!
    // the exact bytes, never re-serialized
    expect(message.data.toString('utf8')).toBe(payload)
    expect(message.attributes).toMatchObject({
      v: '1',
      shape: 'contacts',
      account_id: t.account.id,
      connection_id: t.api.id,
      source: 'crm',
      received_at: new Date(clock.now()).toISOString(),
    })
    expect(message.attributes.batch_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(decodeBatchMessage(message).records).toHaveLength(2)

    const viaHeader = await push(body([record(3)]), { host: t.host, 'x-api-key': t.key, 'content-type': 'application/json' })
    expect(viaHeader.statusCode).toBe(202)
  })

  it('`accepted` counts the records with an external_id; the others are not accepted', async () => {
    const res = await push(body([record(1), { email: 'no-anchor@example.com' }, { external_id: '' }, { external_id: 42 }, { EXTERNAL_ID: 'x-1' }]))
    expect(res.statusCode).toBe(202)
    expect(res.json()).toEqual({ ok: true, accepted: 3, queued: true })
    const none = await push(body([{ email: 'a@example.com' }]))
    expect(none.json()).toEqual({ ok: true, accepted: 0, queued: true })
  })

  it('400 invalid JSON body: malformed, not JSON, empty', async () => {
    expectError(await push('{"contacts": [}'), 400, 'invalid JSON body')
    expectError(await push('contacts=1', t.keyHeaders({ 'content-type': 'application/x-www-form-urlencoded' })), 400, 'invalid JSON body')
    expectError(await push(''), 400, 'invalid JSON body')
  })

  it('400 invalid payload: no contacts array, empty, non-object records, the nested events shape', async () => {
    for (const p of [
      '{}',
      '[]',
      'null',
      '42',
      '{"contacts":{}}',
      '{"contacts":null}',
      '{"contacts":[]}',
      '{"contacts":["a@b.co"]}',
      '{"contacts":[null]}',
      '{"contacts":[[]]}',
      JSON.stringify({ events: [{ resolution: record(1) }] }),
    ]) {
      expectError(await push(p), 400, 'invalid payload')
    }
  })

  it('401 unauthorized, identical for every way the key is wrong', async () => {
    const expired = generateApiKey()
    const revoked = generateApiKey()
    const now = clock.now()
    for (const [key, extra] of [
      [expired, { expires_at: new Date(now - 1).toISOString() }],
      [revoked, { revoked_at: new Date(now - 1).toISOString() }],
    ] as const) {
      await h.deps.tenants.createApiKey({ ...t.keyRecord, id: prefixedId('key'), hash: hashSecret(TEST_PEPPER, key), ...extra })
    }
    const variants: Record<string, Record<string, string>> = {
      missing: { host: t.host },
      unknown: { host: t.host, authorization: `Bearer ${generateApiKey()}` },
      malformed: { host: t.host, authorization: 'Bearer not-a-key' },
      blank: { host: t.host, authorization: 'Bearer ' },
      'blank x-api-key': { host: t.host, 'x-api-key': '' },
      basic: { host: t.host, authorization: 'Basic YTpi' },
      both: { host: t.host, authorization: `Bearer ${t.key}`, 'x-api-key': t.key },
      'wrong bearer + valid x-api-key': { host: t.host, authorization: `Bearer ${generateApiKey()}`, 'x-api-key': t.key },
      expired: { host: t.host, authorization: `Bearer ${expired}` },
      'revoked past grace': { host: t.host, authorization: `Bearer ${revoked}` },
      'key of another tenant': { host: t.host, authorization: `Bearer ${other.key}` },
    }
    const bodies = new Set<string>()
    for (const [name, headers] of Object.entries(variants)) {
      const res = await push(body([record(1)]), { 'content-type': 'application/json', ...headers })
      expect(res.statusCode, name).toBe(401)
      bodies.add(res.body)
    }
    expect([...bodies]).toEqual([JSON.stringify({ ok: false, error: 'unauthorized' })])
  })

  it('403 forbidden: a valid key without contacts:write, or an account without API access', async () => {
    const linksOnly = await createTestTenant(h.deps, { api: { key: { scopes: ['contacts:links:write'] } } })
    const noPlan = await createTestTenant(h.deps, { apiAccess: false })
    try {
      expectError(await push(body([record(1)]), linksOnly.keyHeaders()), 403, 'forbidden')
      expectError(await push(body([record(1)]), noPlan.keyHeaders()), 403, 'forbidden')
    } finally {
      await linksOnly.cleanup()
      await noPlan.cleanup()
    }
  })

  it('404 not found: unknown or inactive subdomain, or a host outside the edge domain; checked before the key', async () => {
    expectError(await push(body([record(1)]), t.keyHeaders({ host: `nobody-${t.publicId}.${h.deps.config.edgeDomain}` })), 404, 'not found')
    expectError(await push(body([record(1)]), { host: `nobody.${h.deps.config.edgeDomain}` }), 404, 'not found')
    expectError(await push(body([record(1)]), t.keyHeaders({ host: 'example.com' })), 404, 'not found')
    const inactive = await createTestTenant(h.deps)
    await h.deps.tenants.updateAccount(inactive.account.id, { active: false })
    try {
      expectError(await push(body([record(1)]), inactive.keyHeaders()), 404, 'not found')
    } finally {
      await inactive.cleanup()
    }
  })

  it('413 too many contacts: more than 10000 records (10000 is fine)', async () => {
    const ten = Array.from({ length: 10_000 }, (_, i) => ({ external_id: `e${i}` }))
    expect((await push(body(ten))).statusCode).toBe(202)
    expectError(await push(body([...ten, { external_id: 'one-more' }])), 413, 'too many contacts')
  })

  it('413 payload too large: over 8388608 bytes, exactly 8388608 is fine', async () => {
    const exact = (size: number) => {
      const head = '{"contacts":[{"external_id":"big","notes":"'
      const tail = '"}]}'
      return head + 'x'.repeat(size - head.length - tail.length) + tail
    }
    expect((await push(exact(8_388_608))).statusCode).toBe(202)
    expectError(await push(exact(8_388_609)), 413, 'payload too large')
  })

  it('413 payload too large while a body without a length streams in: answered before the body ends', async () => {
    // a real socket: chunked, no content-length, 9 MiB written and the request never ended.
    // The answer can only come from a check made while the body streams in.
    const app = await buildEdge(h.deps)
    try {
      await app.listen({ port: 0, host: '127.0.0.1' })
      const { port } = app.server.address() as AddressInfo
      const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path: '/v1/contacts', method: 'POST', headers: { ...t.keyHeaders(), 'transfer-encoding': 'chunked' } },
          (r) => {
            let text = ''
            r.on('data', (d: Buffer) => {
              text += d.toString()
            })
            r.on('end', () => {
              resolve({ status: r.statusCode!, text })
              req.destroy()
            })
          },
        )
        req.on('error', (err) => reject(err))
        const chunk = Buffer.alloc(256 * 1024, 0x20)
        let written = 0
        const writeMore = () => {
          while (written < 9 * 1024 * 1024) {
            written += chunk.length
            if (!req.write(written === chunk.length ? Buffer.concat([Buffer.from('{"contacts":['), chunk]) : chunk)) return void req.once('drain', writeMore)
          }
          // never req.end(): the body is still "arriving" when the answer comes
        }
        writeMore()
      })
      expect(res.status).toBe(413)
      expect(JSON.parse(res.text)).toEqual({ ok: false, error: 'payload too large' })
    } finally {
      await app.close()
    }
  })

  it('503 temporarily unavailable when the queue refuses the batch, never a 202', async () => {
    h.q.state.refuse = true
    try {
      expectError(await push(body([record(1)])), 503, 'temporarily unavailable')
    } finally {
      h.q.state.refuse = false
    }
    expect((await push(body([record(1)]))).statusCode).toBe(202)
  })
})

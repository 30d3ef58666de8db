import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseJsonBody } from '@lsv/shared/lib/json.ts'
import { fallbackShapeOf, MAX_VALUE_DEPTH, recordsOf, withinDepth } from '@lsv/shared/domain/ingest/push-body.ts'
import { body, createIngestFixture, expectError, type Harness, type IngestFixture } from './support/harness.ts'
import type { StoredTenant } from '../helpers/tenant.ts'

/**
 * Push body limits (contract 4.3–4.6, section 8): the 8388608-byte cap on both hosts, at the
 * exact boundary; the JSON parsing every push goes through; the record count and value depth.
 * Written against the mutants StrykerJS found surviving (npm run test:mutation -- body-limits).
 */

const CAP = 8_388_608

/** a push body of exactly `size` bytes */
function exactly(size: number): string {
  const head = '{"contacts":[{"external_id":"big","notes":"'
  const tail = '"}]}'
  return head + 'x'.repeat(size - head.length - tail.length) + tail
}

describe('the 8388608-byte cap, on the edge and on the portal origin', () => {
  let fixture: IngestFixture
  let h: Harness
  let t: StoredTenant
  beforeAll(async () => {
    ;({ h, t } = fixture = await createIngestFixture())
  })
  afterAll(async () => {
    await fixture?.close()
  })

  const hosts = () => [
    { name: 'edge POST /v1/contacts', send: (payload: string) => h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload }) },
    {
      name: 'portal POST /api/contacts/webhook/{sourceId}',
      send: (payload: string) =>
        h.portal.inject({
          method: 'POST',
          url: `/api/contacts/webhook/${t.webhook.id}`,
          headers: { 'x-webhook-token': t.sourceToken, 'content-type': 'application/json' },
          payload,
        }),
    },
  ]

  it('exactly the cap is accepted, one byte more is 413 payload too large', async () => {
    for (const host of hosts()) {
      const atCap = await host.send(exactly(CAP))
      expect(`${host.name}: ${atCap.statusCode}`).toBe(`${host.name}: 202`)
      expectError(await host.send(exactly(CAP + 1)), 413, 'payload too large')
    }
  })
})

describe('parseJsonBody: what every push body goes through', () => {
  const invalid = (raw: Buffer | string) => {
    try {
      parseJsonBody(Buffer.isBuffer(raw) ? raw : Buffer.from(raw))
      return 'parsed'
    } catch (err) {
      return (err as { code?: string }).code
    }
  }

  it('parses JSON, and a UTF-8 byte order mark in front of it', () => {
    expect(parseJsonBody(Buffer.from('{"contacts":[{"a":"é"}]}'))).toEqual({ contacts: [{ a: 'é' }] })
    expect(parseJsonBody(Buffer.from('\ufeff{"a":1}'))).toEqual({ a: 1 })
    expect(parseJsonBody(Buffer.from('[1,2]'))).toEqual([1, 2])
  })

  it('answers invalid_json for an empty body, invalid UTF-8, syntax errors and prototype keys', () => {
    expect(invalid('')).toBe('invalid_json')
    expect(invalid(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]))).toBe('invalid_json')
    expect(invalid('{"a":')).toBe('invalid_json')
    expect(invalid('{"a":1} x')).toBe('invalid_json')
    expect(invalid('\ufeff')).toBe('invalid_json')
    expect(invalid('{"__proto__":{"x":1}}')).toBe('invalid_json')
    expect(invalid('{"constructor":{"prototype":{"x":1}}}')).toBe('invalid_json')
    // a plain "constructor" member is data
    expect(parseJsonBody(Buffer.from('{"constructor":"x"}'))).toEqual({ constructor: 'x' })
  })

  let fixture: IngestFixture
  let h: Harness
  let t: StoredTenant
  beforeAll(async () => {
    ;({ h, t } = fixture = await createIngestFixture())
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('a JSON body is accepted under any content type or none, and the queued bytes are the raw ones', async () => {
    const raw = '{ "contacts" : [ { "external_id" : "ct-1" } ] }'
    for (const contentType of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined]) {
      const before = h.q.batches().length
      const headers: Record<string, string> = { host: t.host, authorization: `Bearer ${t.key}` }
      if (contentType) headers['content-type'] = contentType
      const res = await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers, payload: raw })
      expect(`${contentType}: ${res.statusCode}`).toBe(`${contentType}: 202`)
      const queued = h.q.batches()[before]!
      expect(Buffer.from(queued.data as Uint8Array).toString('utf8')).toBe(raw)
    }
    expectError(
      await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders({ 'content-type': 'text/plain' }), payload: '{"contacts":' }),
      400,
      'invalid JSON body',
    )
  })
})

describe('recordsOf / withinDepth / fallbackShapeOf', () => {
  const code = (f: () => unknown) => {
    try {
      f()
      return 'ok'
    } catch (err) {
      return (err as { code?: string }).code
    }
  }

  it('a body that is not an object is invalid_payload, for every shape', () => {
    for (const shape of ['contacts', 'events', 'partnercrm'] as const) {
      for (const b of [null, [], 'x', 1, true, [{ contacts: [] }]])
        expect(
          code(() => recordsOf(b, shape)),
          `${shape} ${JSON.stringify(b)}`,
        ).toBe('invalid_payload')
    }
  })

  it('contacts: 1..max records, each an object within the depth limit', () => {
    expect(code(() => recordsOf({}, 'contacts'))).toBe('invalid_payload')
    expect(code(() => recordsOf({ contacts: [] }, 'contacts'))).toBe('invalid_payload')
    expect(code(() => recordsOf({ contacts: {} }, 'contacts'))).toBe('invalid_payload')
    expect(code(() => recordsOf({ events: [{ resolution: {} }] }, 'contacts'))).toBe('invalid_payload')
    for (const item of [null, 'x', 1, []]) expect(code(() => recordsOf({ contacts: [{ a: 1 }, item] }, 'contacts'))).toBe('invalid_payload')
    expect(recordsOf({ contacts: [{ a: 1 }, { b: 2 }] }, 'contacts')).toEqual([{ a: 1 }, { b: 2 }])
    expect(recordsOf({ contacts: [{ a: 1 }, { b: 2 }, { c: 3 }] }, 'contacts', 3)).toHaveLength(3)
    expect(code(() => recordsOf({ contacts: [{ a: 1 }, { b: 2 }, { c: 3 }] }, 'contacts', 2))).toBe('too_many_contacts')
    expect(recordsOf({ contacts: Array.from({ length: 10_000 }, () => ({})) }, 'contacts')).toHaveLength(10_000)
    expect(code(() => recordsOf({ contacts: Array.from({ length: 10_001 }, () => ({})) }, 'contacts'))).toBe('too_many_contacts')
  })

  it('events: each element must carry a resolution object', () => {
    expect(recordsOf({ events: [{ resolution: { a: 1 } }, { resolution: { b: 2 } }] }, 'events')).toEqual([{ a: 1 }, { b: 2 }])
    expect(code(() => recordsOf({ events: [] }, 'events'))).toBe('invalid_payload')
    expect(code(() => recordsOf({ contacts: [{ a: 1 }] }, 'events'))).toBe('invalid_payload')
    for (const item of [null, 'x', { resolution: 'x' }, { resolution: [] }, {}])
      expect(code(() => recordsOf({ events: [item] }, 'events'))).toBe('invalid_payload')
  })

  it('partnercrm: the body itself is the one record, within the depth limit', () => {
    expect(recordsOf({ contactId: 'c', extra: { a: [1] } }, 'partnercrm')).toEqual([{ contactId: 'c', extra: { a: [1] } }])
    let deep: unknown = 1
    for (let i = 0; i <= MAX_VALUE_DEPTH; i++) deep = { d: deep }
    expect(code(() => recordsOf({ contactId: 'c', deep }, 'partnercrm'))).toBe('invalid_payload')
    expect(code(() => recordsOf({ contacts: [{ deep }] }, 'contacts'))).toBe('invalid_payload')
  })

  it('withinDepth: exactly MAX_VALUE_DEPTH nested values inside a record are fine, one more is not', () => {
    expect(MAX_VALUE_DEPTH).toBe(32)
    const nest = (levels: number, make: (inner: unknown) => unknown) => {
      let v: unknown = 'leaf'
      for (let i = 0; i < levels; i++) v = make(v)
      return v
    }
    for (const make of [(x: unknown) => [x], (x: unknown) => ({ k: x })]) {
      expect(withinDepth({ a: nest(32, make) })).toBe(true)
      expect(withinDepth({ a: nest(33, make) })).toBe(false)
      // the deep value may sit anywhere, after shallow ones
      expect(withinDepth({ s: 'x', n: null, o: { p: 1 }, a: nest(33, make) })).toBe(false)
      expect(withinDepth({ o: [{ p: 1 }, nest(32, make)] })).toBe(false)
    }
    // null members at any depth are values, not nesting
    expect(withinDepth({ o: { p: null, q: [null, { r: null }] } })).toBe(true)
    expect(withinDepth({})).toBe(true)
    expect(withinDepth({ a: 1, b: 'x', c: null })).toBe(true)
  })

  it('fallbackShapeOf: events only when there is no contacts member', () => {
    expect(fallbackShapeOf({ events: [] })).toBe('events')
    expect(fallbackShapeOf({ contacts: [], events: [] })).toBe('contacts')
    expect(fallbackShapeOf({ contacts: [] })).toBe('contacts')
    expect(fallbackShapeOf({})).toBe('contacts')
    expect(fallbackShapeOf(null)).toBe('contacts')
    expect(fallbackShapeOf([{ events: [] }])).toBe('contacts')
    expect(fallbackShapeOf('events')).toBe('contacts')
  })
})

// a body over the cap never reaches parsing: the count and depth checks above are not the cap
it('the cap is checked on bytes, not records: one huge record over the cap is 413, ten thousand small ones under it are 202', async () => {
  const fixture = await createIngestFixture()
  try {
    const { h, t } = fixture
    expectError(await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: exactly(CAP + 100) }), 413, 'payload too large')
    const many = await h.edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: t.keyHeaders(),
      payload: body(Array.from({ length: 10_000 }, (_, i) => ({ external_id: `s${i}` }))),
    })
    expect(many.statusCode).toBe(202)
  } finally {
    await fixture.close()
  }
})

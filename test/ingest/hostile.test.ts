import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHarness, type Harness, record } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/** Hostile JSON is a 400, never a 5xx or a crash (issue 3). */
describe('hostile bodies', () => {
  let h: Harness
  let t: StoredTenant

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
  })
  afterAll(async () => {
    await t?.cleanup()
    await h?.close()
  })

  const targets = () => [
    { name: 'POST /v1/contacts', app: h.edge, url: '/v1/contacts', headers: t.keyHeaders() },
    {
      name: 'POST /v1/contacts/{sourceId}',
      app: h.edge,
      url: `/v1/contacts/${t.webhook.id}`,
      headers: { host: t.host, 'x-webhook-token': t.sourceToken, 'content-type': 'application/json' },
    },
    {
      name: 'POST /v1/contacts/partnercrm',
      app: h.edge,
      url: '/v1/contacts/partnercrm',
      headers: { host: t.host, 'x-webhook-token': t.locationToken, 'content-type': 'application/json' },
      partner: true,
    },
    { name: 'POST /api/contacts', app: h.portal, url: '/api/contacts', headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' } },
    {
      name: 'POST /api/contacts/webhook/{sourceId}',
      app: h.portal,
      url: `/api/contacts/webhook/${t.webhook.id}`,
      headers: { 'x-webhook-token': t.sourceToken, 'content-type': 'application/json' },
    },
  ]

  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`
  /** every character as a JSON \u escape */
  const escaped = (key: string) => [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')
  const cases = (partner: boolean, locationId: string): Array<[string, string | Buffer, string]> => {
    const wrap = (value: string) =>
      partner ? `{"contactId":"c","locationId":"${locationId}","extra":${value}}` : `{"contacts":[{"external_id":"h","extra":${value}}]}`
    /** the value inside a record of more than 16 KiB */
    const large = (value: string) => wrap(`{"pad":"${'x'.repeat(20_000)}","value":${value}}`)
    return [
      ['__proto__ key', wrap('{"__proto__":{"admin":true}}'), 'invalid JSON body'],
      [
        'top-level __proto__',
        partner ? `{"__proto__":{"x":1},"contactId":"c","locationId":"${locationId}"}` : '{"__proto__":{"contacts":[]},"contacts":[{}]}',
        'invalid JSON body',
      ],
      ['constructor.prototype', wrap('{"constructor":{"prototype":{"polluted":true}}}'), 'invalid JSON body'],
      // spelled with escapes: the parser's quick look for the words (shared/src/lib/json.ts) must not miss them
      ['__proto__ key, escaped', wrap('{"\\u005f_proto__":{"admin":true}}'), 'invalid JSON body'],
      ['__proto__ key, escaped in capitals', wrap('{"\\u005F\\u005Fpr\\u006Fto__":{"admin":true}}'), 'invalid JSON body'],
      ['constructor.prototype, escaped', wrap('{"\\u0063onstructor":{"prototype":{"polluted":true}}}'), 'invalid JSON body'],
      // past 16 KiB the parser searches the bytes for `proto` and `\u` before walking the parse (shared/src/lib/json.ts)
      ['__proto__ key in a large body', large('{"__proto__":{"admin":true}}'), 'invalid JSON body'],
      ['__proto__ key in a large body, every letter escaped', large(`{"${escaped('__proto__')}":{"admin":true}}`), 'invalid JSON body'],
      [
        'constructor.prototype in a large body, every letter escaped',
        large(`{"${escaped('constructor')}":{"${escaped('prototype')}":{"polluted":true}}}`),
        'invalid JSON body',
      ],
      ['deep nesting (100,000 levels)', wrap(deep(100_000)), 'invalid payload'],
      ['deep nesting (40 levels)', wrap(deep(40)), 'invalid payload'],
      ['invalid UTF-8', Buffer.concat([Buffer.from(wrap('"')), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}]}')]), 'invalid JSON body'],
      ['lone surrogate bytes (CESU)', Buffer.concat([Buffer.from(wrap('"')), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}]}')]), 'invalid JSON body'],
      ['not JSON', '<xml/>', 'invalid JSON body'],
      ['trailing garbage', `${wrap('1')} trailing`, 'invalid JSON body'],
      ['NaN', wrap('NaN'), 'invalid JSON body'],
    ]
  }

  it('every hostile body answers 400 with the envelope; the apps keep serving', async () => {
    for (const target of targets()) {
      for (const [label, payload, error] of cases(Boolean(target.partner), t.locationId)) {
        const res = await target.app.inject({ method: 'POST', url: target.url, headers: target.headers, payload })
        expect(`${target.name} ${label}: ${res.statusCode}`).toBe(`${target.name} ${label}: 400`)
        expect(res.json(), `${target.name} ${label}`).toEqual({ ok: false, error })
      }
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined()
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const ok = await h.edge.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: t.keyHeaders(),
      payload: JSON.stringify({ contacts: [record(1, { constructor: 'a plain key', deep: JSON.parse(deep(30)) })] }),
    })
    expect(ok.statusCode).toBe(202)
  })
})

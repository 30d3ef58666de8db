/**
 * Length limits the contract and the docs state in characters count Unicode code points, the way
 * the schemas' `maxLength` (Ajv) counts them, wherever the code checks them by hand
 * (shared/src/lib/code-points.ts). A check by `.length` counts UTF-16 units, and refused values of
 * emoji the schemas accept. The anchor and the partner CRM contact id: test/ingest/anchor-characters.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { AddressInfo } from 'node:net'
import { atMostCodePoints } from '@lsv/shared/lib/code-points.ts'
import { createAjv } from '@lsv/shared/contract/ajv.ts'
import { readPushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { body, createIngestFixture, post, type IngestFixture } from '../ingest/support/harness.ts'
import { OPERATOR, ADMIN } from '../management/harness.ts'

const EMOJI = '😀'
const emoji = (n: number) => EMOJI.repeat(n)

describe('atMostCodePoints agrees with maxLength', () => {
  const ajv = createAjv({ allErrors: false })
  const compiled = new Map<number, (text: string) => boolean>()
  const maxLength = (n: number) => {
    let v = compiled.get(n)
    if (!v) compiled.set(n, (v = ajv.compile({ type: 'string', maxLength: n }) as (text: string) => boolean))
    return v
  }

  it('on the boundary, for BMP letters, emoji, mixes and lone surrogates', () => {
    expect(atMostCodePoints(emoji(256), 256)).toBe(true)
    expect(atMostCodePoints(emoji(257), 256)).toBe(false)
    expect(atMostCodePoints('x'.repeat(256), 256)).toBe(true)
    expect(atMostCodePoints('x'.repeat(257), 256)).toBe(false)
    expect(atMostCodePoints(`${'x'.repeat(255)}${EMOJI}`, 256)).toBe(true)
    expect(atMostCodePoints(`${'x'.repeat(256)}${EMOJI}`, 256)).toBe(false)
    // a lone surrogate is one character, as for Ajv: 129 lone high surrogates are 129
    expect(atMostCodePoints('\ud83d'.repeat(129), 128)).toBe(false)
    expect(atMostCodePoints('\ude00'.repeat(128), 128)).toBe(true)
    expect(atMostCodePoints('', 0)).toBe(true)
  })

  it('on any string of UTF-16 units (surrogates, paired or not, made likely) and any limit', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }),
      fc.integer({ min: 0xd800, max: 0xdbff }),
      fc.integer({ min: 0xdc00, max: 0xdfff }),
      fc.integer({ min: 0, max: 0xffff }),
    )
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 80 }), fc.integer({ min: 0, max: 60 }), (units, max) => {
        const text = String.fromCharCode(...units)
        expect(atMostCodePoints(text, max)).toBe(maxLength(max)(text))
      }),
      { numRuns: 2000 },
    )
  })
})

describe('limits stated in characters, over HTTP', () => {
  let fixture: IngestFixture
  let portal = ''

  beforeAll(async () => {
    fixture = await createIngestFixture()
    await fixture.h.portal.listen({ port: 0, host: '127.0.0.1' })
    portal = `http://127.0.0.1:${(fixture.h.portal.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await fixture?.close()
  })

  // Mutation: integrations.ts words() back to `trimmed.length > max` -> 100 emoji answer 400
  it('an integration name of 100 emoji is stored (as the schema lets it through), 101 are 400 (management API, docs: 1..100 characters)', async () => {
    const base = `${portal}${ADMIN}/${fixture.t.account.id}/integrations`
    const send = (method: 'POST' | 'PATCH', url: string, payload: object) =>
      fetch(url, { method, headers: { ...OPERATOR, 'content-type': 'application/json' }, body: JSON.stringify(payload) })
    const created = await send('POST', base, { url: 'https://hooks.example.com/emoji', payload_version: 2, name: emoji(100), description: emoji(500) })
    expect(created.status).toBe(201)
    const integration = (await created.json()) as { id: string; name: string; description: string }
    expect(integration).toMatchObject({ name: emoji(100), description: emoji(500) })
    const renamed = await send('PATCH', `${base}/${integration.id}`, { name: `${emoji(99)}x` })
    expect(renamed.status).toBe(200)
    expect(await renamed.json()).toMatchObject({ name: `${emoji(99)}x` })
    for (const payload of [{ name: emoji(101) }, { description: emoji(501) }]) {
      const refused = await send('PATCH', `${base}/${integration.id}`, payload)
      expect(refused.status).toBe(400)
      expect(await refused.json()).toMatchObject({ ok: false, error: 'invalid payload' })
    }
  })

  // Mutation: push-sample.ts countKey back to `key.length > MAX_KEY_LENGTH` -> the 128-emoji key is under other_keys
  it('the push sample counts a key of 128 emoji by name, as a mapping can name it; 129 go under other_keys (docs/portal.md)', async () => {
    const { h, t } = fixture
    const edge = await buildEdge(h.deps)
    await edge.listen({ port: 0, host: '127.0.0.1' })
    const port = (edge.server.address() as AddressInfo).port
    const record = { external_id: 'sample-1', [emoji(128)]: 'a', [emoji(129)]: 'b' }
    const res = await post(port, '/v1/contacts', { host: t.host, authorization: `Bearer ${t.key}`, 'content-type': 'application/json' }, body([record]))
    expect(res).toEqual({ status: 202, answer: { ok: true, accepted: 1, queued: true } })
    // closing the edge flushes its recorder: the sample is stored now
    await edge.close()
    const sample = await readPushSample(h.deps, t.api.id)
    expect(sample?.keys).toEqual({ external_id: 1, [emoji(128)]: 1 })
    expect(sample?.other_keys).toBe(1)
  })
})

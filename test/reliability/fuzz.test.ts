import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { ERROR_CODES } from '@lsv/shared/errors/codes.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { createTestTenant, type ManagedTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, contactRecord, type Injectable } from './support/requests.ts'
import { mutateBytes, replaceSomewhere } from './support/mutate.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 4: fuzzing the four inbound operations and link minting through app.inject on the real
 * apps: generated JSON (fast-check), structural and byte mutations of valid bodies, and random
 * headers (content types, credentials). Pass: no 5xx except the contract's 503s, the app never
 * crashes (it still answers health afterwards, no unhandled rejection), and every error body is
 * exactly the envelope `{ok:false, error}` (+ `issues` on link minting) with one of the texts of
 * shared/src/errors/codes.ts. The clock jumps a minute every 100 requests so the rate limiter
 * does not turn the run into 429s.
 */

const TEXTS = new Set<string>(Object.values(ERROR_CODES).map((c) => c.message))
const ALLOWED_5XX = new Set(['503 temporarily unavailable', '503 signed links unavailable'])
const RUNS = Number(process.env.FUZZ_RUNS ?? 300)

type Deps = Awaited<ReturnType<typeof createTestDeps>>
interface Op {
  name: string
  app: 'edge' | 'portal'
  url: (t: ManagedTenant) => string
  auth: (t: ManagedTenant) => Record<string, string>
  valid: (t: ManagedTenant) => unknown
  issues: boolean
}

const OPS: Op[] = [
  {
    name: 'POST /v1/contacts',
    app: 'edge',
    url: () => '/v1/contacts',
    auth: (t) => ({ authorization: `Bearer ${t.key}` }),
    valid: () => ({ contacts: [contactRecord(1), contactRecord(2, { company: 'Acme' })] }),
    issues: false,
  },
  {
    name: 'POST /v1/contacts/{sourceId}',
    app: 'edge',
    url: (t) => `/v1/contacts/${t.webhookConnectionId}`,
    auth: (t) => ({ 'x-webhook-token': t.sourceToken }),
    valid: () => ({ contacts: [contactRecord(3)] }),
    issues: false,
  },
  {
    name: 'POST /v1/contacts/partnercrm',
    app: 'edge',
    url: () => '/v1/contacts/partnercrm',
    auth: (t) => ({ 'x-webhook-token': t.locationToken }),
    valid: (t) => ({ contactId: 'p-1', locationId: t.locationId, email: 'p@example.com', firstName: 'P' }),
    issues: false,
  },
  {
    name: 'POST /api/contacts',
    app: 'portal',
    url: () => '/api/contacts',
    auth: (t) => ({ authorization: `Bearer ${t.key}` }),
    valid: () => ({ contacts: [contactRecord(4)] }),
    issues: false,
  },
  {
    name: 'POST /api/contacts/links',
    app: 'portal',
    url: () => '/api/contacts/links',
    auth: (t) => ({ 'x-api-key': t.key }),
    valid: () => ({ destinationUrl: 'https://example.com/landing?a=1', source: 'crm', externalId: 'ext-1', type: 'opaque' }),
    issues: true,
  },
]

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  '',
  'application/json;;;',
]

describe('reliability 4: fuzzing inbound operations and link minting', () => {
  let deps: Deps
  let clock: ManualClock
  let edge: Injectable
  let portal: Injectable
  let tenant: ManagedTenant
  let sent = 0
  const unhandled: unknown[] = []
  const onUnhandled = (e: unknown) => unhandled.push(e)

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled)
    clock = new ManualClock(Date.now())
    deps = await createTestDeps({ clock })
    edge = (await buildEdge(deps)) as unknown as Injectable
    portal = (await buildPortal(deps)) as unknown as Injectable
    tenant = await createTestTenant({ managementApi: portal, deps }, RELIABILITY_TENANT)
  })
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled)
    await edge?.close()
    await portal?.close()
    await deps?.cleanup()
  })

  /** Sends one request and returns a violation description, or null when the answer is acceptable. */
  async function send(op: Op, payload: string, headers: Record<string, string>, url = op.url(tenant)): Promise<string | null> {
    if (++sent % 100 === 0) clock.advance(61_000)
    const app = op.app === 'edge' ? edge : portal
    const h = op.app === 'edge' ? { host: tenant.host, ...headers } : headers
    let res
    try {
      res = await app.inject({ method: 'POST', url, headers: h, payload })
    } catch (err) {
      return `${op.name}: inject threw ${(err as Error).message}`
    }
    const where = `${op.name} ${JSON.stringify(payload.slice(0, 120))} ${JSON.stringify(headers)}`
    if (res.statusCode < 400) return null
    let body: any
    try {
      body = JSON.parse(res.body)
    } catch {
      return `${where}: ${res.statusCode} non-JSON error body ${JSON.stringify(res.body.slice(0, 200))}`
    }
    if (res.statusCode >= 500 && !ALLOWED_5XX.has(`${res.statusCode} ${body?.error}`)) return `${where}: ${res.statusCode} ${res.body.slice(0, 200)}`
    const keys = Object.keys(body ?? {})
      .sort()
      .join(',')
    const shapeOk =
      body?.ok === false && typeof body.error === 'string' && (keys === 'error,ok' || (op.issues && keys === 'error,issues,ok' && Array.isArray(body.issues)))
    if (!shapeOk) return `${where}: ${res.statusCode} envelope ${res.body.slice(0, 200)}`
    if (!TEXTS.has(body.error)) return `${where}: ${res.statusCode} unknown error text ${JSON.stringify(body.error)}`
    return null
  }

  const headerArb = (op: Op) =>
    fc
      .record({
        contentType: fc.constantFrom(...CONTENT_TYPES),
        auth: fc.constantFrom('valid', 'none', 'garbage', 'blank', 'both', 'lowercase-bearer'),
      })
      .map(({ contentType, auth }) => {
        const valid = op.auth(tenant)
        const [name, value] = Object.entries(valid)[0]!
        const h: Record<string, string> = contentType ? { 'content-type': contentType } : {}
        if (auth === 'valid') Object.assign(h, valid)
        if (auth === 'garbage') h[name] = name === 'authorization' ? `Bearer lsk_${'x'.repeat(40)}` : 'garbage\u00ff'
        if (auth === 'blank') h[name] = name === 'authorization' ? 'Bearer ' : ''
        if (auth === 'both') Object.assign(h, valid, { 'x-api-key': tenant.key, authorization: `Bearer ${tenant.key}` })
        if (auth === 'lowercase-bearer') h[name] = value.replace(/^Bearer /, 'bearer ')
        return h
      })

  for (const op of OPS) {
    it(`${op.name}: generated and mutated bodies give no unexpected 5xx and only contract envelopes`, async () => {
      const violations: string[] = []
      let count = 0
      const valid = op.valid(tenant)
      const validText = JSON.stringify(valid)
      // sanity: the valid body with valid headers is accepted (so the fuzzing reaches the handler)
      const baseline = await send(op, validText, { 'content-type': 'application/json', ...op.auth(tenant) })
      expect(baseline).toBeNull()

      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
            fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.double()).map(([v, r]) => JSON.stringify(replaceSomewhere(valid, v, rng(r)))),
            fc.double({ min: 0, max: 1, noNaN: true }).map((r) => mutateBytes(validText, rng(r))),
            fc.string({ unit: 'binary', maxLength: 300 }),
            fc.constantFrom(
              '',
              ' ',
              'null',
              '[]',
              '{}',
              '{"contacts":[]}',
              '{"contacts":{}}',
              '{"contacts":null}',
              `{"contacts":[${'{},'.repeat(10_000)}{}]}`,
              '{"__proto__":{"contacts":[]}}',
              '{"contacts":[{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}]}',
              `\uFEFF${validText}`,
            ),
          ),
          headerArb(op),
          async (payload, headers) => {
            count++
            const v = await send(op, payload, headers)
            if (v) violations.push(v)
          },
        ),
        { numRuns: RUNS, seed: 4242 + op.name.length },
      )

      // path fuzz for the per-source route: hostile source ids
      if (op.url(tenant).includes(tenant.webhookConnectionId)) {
        for (const id of ['..%2f..%2fetc', '%00', 'x'.repeat(3000), '%E2%80%AE', '__proto__', 'constructor', ' ', '%25', '😀']) {
          count++
          const v = await send(op, validText, { 'content-type': 'application/json', ...op.auth(tenant) }, `/v1/contacts/${id}`)
          if (v) violations.push(v)
        }
      }
      const health = await (op.app === 'edge' ? edge : portal).inject({
        method: 'GET',
        url: '/healthz',
        headers: op.app === 'edge' ? { host: tenant.host } : {},
      })
      printFigure(
        `fuzz ${op.name}`,
        `${violations.length} violations over ${count} requests (unexpected 5xx, crashes, envelopes or texts outside the contract)`,
      )
      expect(violations.slice(0, 20)).toEqual([])
      expect(health.statusCode).toBeLessThan(500)
    })
  }

  it('no unhandled rejection during the run', () => {
    expect(unhandled).toEqual([])
  })
})

/** A small deterministic generator seeded from a fast-check double. */
function rng(seed: number): () => number {
  let s = Math.floor((seed || 0.5) * 2 ** 31) | 1
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return ((s >>> 0) % 1_000_000) / 1_000_000
  }
}

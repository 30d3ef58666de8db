import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createIngestFixture, type Harness, expectError, type IngestFixture } from './support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { PUSH_WINDOWS, pushQuotaKey } from '@lsv/shared/domain/ingest/rate-limit.ts'

const CUTOVER = Date.UTC(2026, 9, 1)

/** POST /v1/contacts/partnercrm (contract 4.5). */
describe('POST /v1/contacts/partnercrm', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  const clock = new ManualClock(CUTOVER - 86_400_000)
  const push = (payload: unknown, headers: Record<string, string> = { 'x-webhook-token': t.locationToken }, url = '/v1/contacts/partnercrm') =>
    h.edge.inject({
      method: 'POST',
      url,
      headers: { host: t.host, 'content-type': 'application/json', ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    })

  let fixture: IngestFixture
  beforeAll(async () => {
    ;({ h, t, other } = fixture = await createIngestFixture({ clock, env: { PARTNERCRM_TOKEN_CUTOVER: new Date(CUTOVER).toISOString() } }))
  })
  afterAll(async () => {
    await fixture?.close()
  })

  // Mutation: checkPush without refuseUnstorable -> 202, and the worker dead-letters the batch
  it('a record whose mapped field is too large to store is refused 400 invalid payload, with or without a token, and nothing is queued', async () => {
    const huge = 'x'.repeat(500_000)
    for (const headers of [{}, { 'x-webhook-token': t.locationToken }] as Array<Record<string, string>>) {
      const before = h.q.batches().length
      expectError(await push({ contactId: 'p-huge', locationId: t.locationId, firstName: huge }, headers), 400, 'invalid payload')
      expect(h.q.batches().length).toBe(before)
    }
    // just under the cap it is stored as before
    expect((await push({ contactId: 'p-big', locationId: t.locationId, firstName: 'x'.repeat(400_000) })).statusCode).toBe(202)
  })

  it('202 for every id and location alias; the message carries the raw body, source partnercrm and the location', async () => {
    for (const payload of [
      { contactId: 'p-1', locationId: t.locationId, email: 'p@example.com', firstName: 'P' },
      { contact_id: 'p-2', location_id: t.locationId },
      { id: 'p-3', locationId: t.locationId, companyName: 'Acme' },
    ]) {
      const before = h.q.batches().length
      const res = await push(payload)
      expect(res.statusCode).toBe(202)
      expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
      const m = h.q.batches()[before]!
      expect(m.data.toString()).toBe(JSON.stringify(payload))
      expect(m.attributes).toMatchObject({
        shape: 'partnercrm',
        source: 'partnercrm',
        connection_id: t.partner.id,
        location_id: t.locationId,
        account_id: t.account.id,
      })
    }
    expect(
      (await push({ contactId: 'p-4', locationId: t.locationId }, {}, `/v1/contacts/partnercrm?token=${encodeURIComponent(t.locationToken)}`)).statusCode,
    ).toBe(202)
  })

  it('400: malformed JSON, or no contact id', async () => {
    expectError(await push('{"contactId":'), 400, 'invalid JSON body')
    expectError(await push({ locationId: t.locationId, email: 'x@example.com' }), 400, 'invalid payload')
    expectError(await push({ contactId: '', locationId: t.locationId }), 400, 'invalid payload')
    expectError(await push({ contactId: { nested: 1 }, locationId: t.locationId }), 400, 'invalid payload')
    expectError(await push([{ contactId: 'x' }]), 400, 'invalid payload')
  })

  it('401: a presented token that does not match the location (blank, wrong, another location, another account)', async () => {
    const second = `${t.locationId}-b`
    await h.deps.tenants.putLocation({
      account_id: t.account.id,
      connection_id: t.partner.id,
      location_id: second,
      token_hashes: [],
      active: true,
      created_at: '',
      updated_at: '',
    })
    for (const headers of [{ 'x-webhook-token': '' }, { 'x-webhook-token': 'lst_wrong' }, { 'x-webhook-token': other.locationToken }]) {
      expectError(await push({ contactId: 'p-1', locationId: t.locationId }, headers), 401, 'unauthorized')
    }
    expectError(await push({ contactId: 'p-1', locationId: second }, { 'x-webhook-token': t.locationToken }), 401, 'unauthorized')
  })

  it("404 identical to an unknown subdomain: no such location, inactive location, another account's location, no active connection", async () => {
    const unknownSubdomain = await push(
      { contactId: 'p-1', locationId: t.locationId },
      { host: `zz-${t.publicId}.${h.deps.config.edgeDomain}`, 'x-webhook-token': t.locationToken },
    )
    expectError(unknownSubdomain, 404, 'not found')
    const strip = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !['date', 'x-request-id'].includes(k)))
    const same = (res: Awaited<ReturnType<typeof push>>) => {
      expect(res.statusCode).toBe(404)
      expect(res.body).toBe(unknownSubdomain.body)
      expect(strip(res.headers)).toEqual(strip(unknownSubdomain.headers))
    }
    same(await push({ contactId: 'p-1', locationId: 'loc-unknown' }))
    same(await push({ contactId: 'p-1' }))
    same(await push({ contactId: 'p-1', locationId: other.locationId }, { 'x-webhook-token': other.locationToken }))
    const gone = await createTestTenant(h.deps)
    const noConnection = await createTestTenant(h.deps)
    try {
      await h.deps.tenants.updateLocation(gone.account.id, gone.locationId, { active: false })
      await h.deps.tenants.updateConnection(noConnection.partner.id, { active: false })
      for (const [tenant, label] of [
        [gone, 'inactive location'],
        [noConnection, 'inactive connection'],
      ] as const) {
        const res = await h.edge.inject({
          method: 'POST',
          url: '/v1/contacts/partnercrm',
          headers: { host: tenant.host, 'content-type': 'application/json', 'x-webhook-token': tenant.locationToken },
          payload: JSON.stringify({ contactId: 'p', locationId: tenant.locationId }),
        })
        expect(res.body, label).toBe(unknownSubdomain.body)
        same(res)
      }
    } finally {
      await gone.cleanup()
      await noConnection.cleanup()
    }
  })

  it('no token at all: accepted and flagged in the logs before the cutover, 401 from the cutover on', async () => {
    const warn = vi.spyOn(h.deps.logger, 'warn')
    try {
      const before = await push({ contactId: 'p-5', locationId: t.locationId }, {})
      expect(before.statusCode).toBe(202)
      expect(warn.mock.calls.some(([obj]) => (obj as { flag?: string })?.flag === 'partnercrm_tokenless')).toBe(true)
      clock.set(CUTOVER)
      expectError(await push({ contactId: 'p-5', locationId: t.locationId }, {}), 401, 'unauthorized')
      // a valid token keeps working after the cutover
      expect((await push({ contactId: 'p-5', locationId: t.locationId })).statusCode).toBe(202)
    } finally {
      warn.mockRestore()
      clock.set(CUTOVER - 86_400_000)
    }
  })

  it('a token-less body of a rate-limited location is refused 429 before it is parsed (issue 31)', async () => {
    // another location of its own, its token-less windows spent (120 a minute)
    const x = await createTestTenant(h.deps)
    try {
      const key = pushQuotaKey({ kind: 'location-tokenless', accountId: x.account.id, locationId: x.locationId })
      for (let i = 0; i < PUSH_WINDOWS[0]!.limit; i++) await h.deps.rateLimiter.consume(key, PUSH_WINDOWS, clock.now())
      // the scan finds the location in the bytes; only a parse would see the bad number (a 400)
      const res = await h.edge.inject({
        method: 'POST',
        url: '/v1/contacts/partnercrm',
        headers: { host: x.host, 'content-type': 'application/json' },
        payload: `{"locationId":${JSON.stringify(x.locationId)},"contactId":"c","n":01}`,
      })
      // mutation: the rate limit checked after the parse (as before) -> 400 invalid JSON body
      expectError(res, 429, 'rate limited')
    } finally {
      await x.cleanup()
    }
  })

  it('413 payload too large', async () => {
    expectError(await push(`{"contactId":"p","locationId":"${t.locationId}","notes":"${'n'.repeat(8_388_608)}"}`), 413, 'payload too large')
  })

  it('503 temporarily unavailable when the queue refuses', async () => {
    h.q.state.refuse = true
    try {
      expectError(await push({ contactId: 'p-1', locationId: t.locationId }), 503, 'temporarily unavailable')
    } finally {
      h.q.state.refuse = false
    }
  })
})

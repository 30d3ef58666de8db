import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { PUSH_WINDOWS } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { createIngestFixture, expectError, type Harness, type IngestFixture } from '../ingest/support/harness.ts'
import type { StoredTenant } from '../helpers/tenant.ts'

/**
 * Token-less partner CRM calls (contract 5.8: accepted and flagged before the cutover) count in
 * rate-limit windows of their own, so spoofed calls cannot use up the real sender's window; and
 * each partner CRM connection can be cut over on its own through the management API
 * (`require_token` on PATCH …/connections/{id}), besides the global PARTNERCRM_TOKEN_CUTOVER.
 */
describe('partner CRM: token-less calls apart, per-connection cutover', () => {
  let fixture: IngestFixture
  let h: Harness
  let t: StoredTenant
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 9, 0, 0))
  const OPERATOR = { authorization: 'Bearer test-operator-token', 'content-type': 'application/json' }
  const push = (payload: unknown, headers: Record<string, string> = {}) =>
    h.edge.inject({
      method: 'POST',
      url: '/v1/contacts/partnercrm',
      headers: { host: t.host, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(payload),
    })
  const withToken = () => ({ 'x-webhook-token': t.locationToken })
  const connectionUrl = (id: string) => `/api/v1/admin/accounts/${t.account.id}/connections/${id}`
  const patch = (id: string, body: unknown) => h.portal.inject({ method: 'PATCH', url: connectionUrl(id), headers: OPERATOR, payload: JSON.stringify(body) })

  beforeAll(async () => {
    fixture = await createIngestFixture({ clock })
    ;({ h, t } = fixture)
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('120 spoofed token-less calls do not rate-limit the sender holding the token; token-less calls have their own 429', async () => {
    const minute = PUSH_WINDOWS.find((w) => w.seconds === 60)!
    clock.set(Date.UTC(2026, 8, 4, 10, 0, 0))
    for (let i = 0; i < minute.limit; i++) {
      const res = await push({ contactId: `spoof-${i}`, locationId: t.locationId })
      expect(res.statusCode).toBe(202)
    }
    const spoofed = await push({ contactId: 'spoof-more', locationId: t.locationId })
    expectError(spoofed, 429, 'rate limited')
    expect(spoofed.headers['retry-after']).toBe('60')
    // the real sender still has its whole window
    for (let i = 0; i < 5; i++) expect((await push({ contactId: `real-${i}`, locationId: t.locationId }, withToken())).statusCode).toBe(202)
  })

  it('the sender holding the token exhausting its window does not open the token-less one either way', async () => {
    const minute = PUSH_WINDOWS.find((w) => w.seconds === 60)!
    clock.set(Date.UTC(2026, 8, 4, 11, 0, 0))
    for (let i = 0; i < minute.limit; i++) expect((await push({ contactId: `r-${i}`, locationId: t.locationId }, withToken())).statusCode).toBe(202)
    expectError(await push({ contactId: 'r-more', locationId: t.locationId }, withToken()), 429, 'rate limited')
    expect((await push({ contactId: 'anon', locationId: t.locationId })).statusCode).toBe(202)
  })

  it('PATCH require_token cuts one connection over: its token-less calls answer 401, before the body is considered; false undoes it', async () => {
    clock.set(Date.UTC(2026, 8, 4, 12, 0, 0))
    const read = await h.portal.inject({ method: 'GET', url: connectionUrl(t.partner.id), headers: OPERATOR })
    expect(read.json()).toMatchObject({ id: t.partner.id, type: 'partnercrm', require_token: false })

    const cut = await patch(t.partner.id, { require_token: true })
    expect(cut.statusCode, cut.body).toBe(200)
    expect(cut.json()).toMatchObject({ id: t.partner.id, require_token: true })
    expectError(await push({ contactId: 'p-1', locationId: t.locationId }), 401, 'unauthorized')
    // even a body that names no location: the cutover is decided before the body
    expectError(await push({ nothing: true }), 401, 'unauthorized')
    expect((await push({ contactId: 'p-1', locationId: t.locationId }, withToken())).statusCode).toBe(202)
    // another account's connection is not cut over
    const other = fixture.other
    const otherPush = await h.edge.inject({
      method: 'POST',
      url: '/v1/contacts/partnercrm',
      headers: { host: other.host, 'content-type': 'application/json' },
      payload: JSON.stringify({ contactId: 'o-1', locationId: other.locationId }),
    })
    expect(otherPush.statusCode).toBe(202)

    const undone = await patch(t.partner.id, { require_token: false })
    expect(undone.json()).toMatchObject({ require_token: false })
    expect((await push({ contactId: 'p-2', locationId: t.locationId })).statusCode).toBe(202)
  })

  it('require_token exists only on partner CRM connections: 400 on another type', async () => {
    const res = await patch(t.webhook.id, { require_token: true })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ ok: false, error: 'invalid payload', issues: [{ path: '/require_token' }] })
    const webhook = await h.portal.inject({ method: 'GET', url: connectionUrl(t.webhook.id), headers: OPERATOR })
    expect(webhook.json()).not.toHaveProperty('require_token')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { WEBHOOK_ACTION_WINDOWS } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { ADMIN, call } from '../management/harness.ts'
import { signIn } from './support.ts'
import { formPost } from './screens-support.ts'

/**
 * Issue 21, item 5: the actions that make the platform send signed POSTs to a URL the tenant
 * chose (test events, replays, new integrations) have per-account limits, shared by the
 * management API and the portal, answered 429 `rate limited` with `Retry-After` (and a page that
 * says so in the portal). A manual clock moves the fixed windows: nothing here waits.
 */
describe('limits on webhook actions that send traffic', () => {
  // 10 s into a minute, 10 min into an hour: Retry-After of the hourly window is 3000
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 10, 10))
  let h: Harness
  const tenants: StoredTenant[] = []

  const tenant = async () => {
    const t = await createTestTenant(h.deps, { ...ACCOUNT_ONLY, integration: { url: 'https://hooks.example.com/in' } })
    tenants.push(t)
    return t
  }
  const deliveriesOf = async (t: StoredTenant) =>
    (await call(h.portal, 'GET', `${ADMIN}/${t.accountId}/integrations/${t.integrationId}/deliveries?limit=100`)).json().data as unknown[]

  beforeAll(async () => {
    h = await createHarness({ clock })
  })
  afterAll(async () => {
    for (const t of tenants) await t.cleanup()
    await h?.close()
  })

  it('the limits are the documented ones (docs/webhooks.md)', () => {
    expect(WEBHOOK_ACTION_WINDOWS.test_event).toMatchObject({ limit: 10, seconds: 60 })
    expect(WEBHOOK_ACTION_WINDOWS.replay).toMatchObject({ limit: 60, seconds: 60 })
    expect(WEBHOOK_ACTION_WINDOWS.integration_create).toMatchObject({ limit: 20, seconds: 3600 })
    expect(WEBHOOK_ACTION_WINDOWS.test_alert).toMatchObject({ limit: 5, seconds: 60 })
  })

  // mutation: drop consumeWebhookActionQuota from the test-event route -> the 11th answers 202
  it('management API: the 11th test event of a minute is 429 with Retry-After 60 and sends nothing; another account is not affected; the next minute works', async () => {
    const t = await tenant()
    const other = await tenant()
    const url = (x: StoredTenant) => `${ADMIN}/${x.accountId}/integrations/${x.integrationId}/test-event`
    for (let i = 0; i < 10; i++) expect((await call(h.portal, 'POST', url(t))).statusCode).toBe(202)
    const refused = await call(h.portal, 'POST', url(t))
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toEqual({ ok: false, error: 'rate limited' })
    expect(refused.headers['retry-after']).toBe('60')
    expect(await deliveriesOf(t)).toHaveLength(10)
    expect((await call(h.portal, 'POST', url(other))).statusCode).toBe(202)
    clock.advance(60_000)
    expect((await call(h.portal, 'POST', url(t))).statusCode).toBe(202)
  })

  // mutation: drop consumeWebhookActionQuota from the replay route -> the 61st answers 202
  it('management API: the 61st replay of a minute is 429 with Retry-After 60', async () => {
    const t = await tenant()
    const delivery = await createDelivery(h.deps, {
      accountId: t.accountId,
      integrationId: t.integrationId,
      eventId: 'evt_limits_1',
      body: '{}',
      now: new Date(clock.now()).toISOString(),
    })
    const url = `${ADMIN}/${t.accountId}/integrations/${t.integrationId}/deliveries/${delivery.id}/replay`
    for (let i = 0; i < 60; i++) expect((await call(h.portal, 'POST', url)).statusCode).toBe(202)
    const refused = await call(h.portal, 'POST', url)
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toEqual({ ok: false, error: 'rate limited' })
    expect(refused.headers['retry-after']).toBe('60')
  })

  // mutation: drop consumeWebhookActionQuota from the create route -> the 21st answers 201;
  // mutation: Retry-After fixed at 60 for every window -> '60' instead of the 3000 s left
  it('management API: the 21st integration created in an hour is 429 with the seconds left of the hour, and is not created', async () => {
    clock.set(Date.UTC(2026, 8, 4, 13, 10, 0))
    const t = await tenant()
    const url = `${ADMIN}/${t.accountId}/integrations`
    const body = { url: 'https://hooks.example.com/more', payload_version: 2 }
    for (let i = 0; i < 20; i++) expect((await call(h.portal, 'POST', url, body)).statusCode).toBe(201)
    const refused = await call(h.portal, 'POST', url, body)
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toEqual({ ok: false, error: 'rate limited' })
    expect(refused.headers['retry-after']).toBe('3000')
    // the one the tenant made with the store, and the 20 created here
    expect((await call(h.portal, 'GET', url)).json().data).toHaveLength(21)
  })

  // mutation: drop consumeWebhookActionQuota from a portal form route -> that form answers 303/201
  it('portal: the same windows (shared with the management API); a refused form answers 429 with Retry-After and says why', async () => {
    const t = await tenant()
    const cookie = await signIn(h.portal, t.accountId)
    const screen = `/portal/webhooks/${t.integrationId}`
    // test events: 9 through the management API, the 10th through the portal, the 11th refused
    for (let i = 0; i < 9; i++)
      expect((await call(h.portal, 'POST', `${ADMIN}/${t.accountId}/integrations/${t.integrationId}/test-event`)).statusCode).toBe(202)
    expect((await formPost(h.portal, `${screen}/test`, cookie)).statusCode).toBe(303)
    const test = await formPost(h.portal, `${screen}/test`, cookie)
    expect(test.statusCode).toBe(429)
    expect(test.headers['retry-after']).toBe('60')
    expect(test.body).toContain('Too many test events for this account: at most 10 a minute. Try again in 60 seconds.')
    expect(await deliveriesOf(t)).toHaveLength(10)

    // replays: the window is full after 60
    const [first] = (await deliveriesOf(t)) as Array<{ id: string }>
    for (let i = 0; i < 60; i++) expect((await formPost(h.portal, `${screen}/deliveries/${first!.id}/replay`, cookie)).statusCode).toBe(303)
    const replay = await formPost(h.portal, `${screen}/deliveries/${first!.id}/replay`, cookie)
    expect(replay.statusCode).toBe(429)
    expect(replay.headers['retry-after']).toBe('60')
    expect(replay.body).toContain('Too many replays for this account: at most 60 a minute.')

    // new webhooks: 20 an hour; the refused form keeps what was typed
    for (let i = 0; i < 20; i++)
      expect((await formPost(h.portal, '/portal/webhooks', cookie, { url: `https://hooks.example.com/p${i}`, payload_version: '2' })).statusCode).toBe(303)
    const create = await formPost(h.portal, '/portal/webhooks', cookie, { url: 'https://hooks.example.com/typed', payload_version: '2' })
    expect(create.statusCode).toBe(429)
    expect(Number(create.headers['retry-after'])).toBeGreaterThan(60)
    expect(create.body).toContain('Too many new webhooks for this account: at most 20 an hour.')
    expect(create.body).toContain('https://hooks.example.com/typed')
    expect((await call(h.portal, 'GET', `${ADMIN}/${t.accountId}/integrations`)).json().data).toHaveLength(21)
  })
})

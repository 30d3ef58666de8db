import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import { ACCOUNT_ONLY, createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { formPost, page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const at = (ms: number) => new Date(T0 + ms).toISOString()
// the retries the receiver would otherwise wait for: hours away
const LATER = '2099-01-01T00:00:00.000Z'

/**
 * Issue 29, D5: a recover sends failed deliveries only, so after the receiver was fixed it said
 * "nothing to send" while deliveries waited hours for their next retry. "Retry everything
 * waiting" asks on a GET page, then the POST sends every `retrying` delivery now and answers 303.
 */
describe('portal: retry everything waiting', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal({ ...ACCOUNT_ONLY, integration: { url: 'https://hooks.example.com/waiting' } }))
    const record = (n: number, status: DeliveryRecord['status'], next: string | null): DeliveryRecord => ({
      id: `dlv_w${n}_${t.account.id}`,
      account_id: t.account.id,
      integration_id: t.integration.id,
      event_id: `evt_w${n}_${t.account.id}`,
      status,
      attempts: [{ attempt: 1, at: at(n), status_code: 503, error: null, latency_ms: 5, response_excerpt: null }],
      body: '{}',
      next_attempt_at: next,
      created_at: at(n),
      updated_at: at(n),
    })
    await Promise.all([record(0, 'retrying', LATER), record(1, 'retrying', LATER), record(2, 'succeeded', null)].map((d) => deps.deliveries.put(d)))
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  const base = () => `/portal/webhooks/${t.integration.id}`

  it('a recover with nothing failed names the waiting deliveries and leads to retrying them', async () => {
    const confirm = await page(portal, `${base()}/recover?since=2026-03-01T09:00`, cookie)
    expect(confirm.statusCode).toBe(200)
    expect(confirm.body).toContain('Nothing failed since that time: nothing to send.')
    // mutation: without waitingWords the page stops at "nothing to send"
    expect(confirm.body).toContain('2 deliveries are still waiting for a retry')
    expect(confirm.body).toContain(`href="${base()}/retry-waiting"`)
    expect((await page(portal, base(), cookie)).body).toContain(`href="${base()}/retry-waiting"`)
  })

  it('asks first, then sends every waiting delivery now, answers 303 and is audited; a second time finds none', async () => {
    const ask = await page(portal, `${base()}/retry-waiting`, cookie)
    expect(ask.statusCode).toBe(200)
    expect(ask.body).toContain('Send 2 waiting deliveries now?')
    expect(ask.body).toContain(`<form method="post" action="${base()}/retry-waiting"`)
    // the question page changed nothing
    expect((await deps.deliveries.get(`dlv_w0_${t.account.id}`))!.status).toBe('retrying')

    const before = Date.now()
    const posted = await formPost(portal, `${base()}/retry-waiting`, cookie)
    expect(posted.statusCode).toBe(303)
    expect(posted.headers.location).toBe(`${base()}?flash=waiting-retried`)
    for (const n of [0, 1]) {
      const d = (await deps.deliveries.get(`dlv_w${n}_${t.account.id}`))!
      expect(d.status).toBe('pending')
      expect(d.attempts).toHaveLength(1)
      // brought forward: due now, not at the retry hours away
      expect(Date.parse(d.next_attempt_at!)).toBeGreaterThanOrEqual(before - 1000)
      expect(Date.parse(d.next_attempt_at!)).toBeLessThan(Date.parse(LATER))
    }
    expect((await deps.deliveries.get(`dlv_w2_${t.account.id}`))!.status).toBe('succeeded')
    const flashed = await page(portal, posted.headers.location as string, cookie)
    expect(flashed.body).toContain('The deliveries waiting for a retry are queued to be sent now.')
    const entry = (await listAudit(deps, t.account.id, { limit: 20 })).data.find((e) => e.action === 'delivery.retried_waiting')!
    expect(entry.details).toMatchObject({ found: 2, replayed: 2 })

    // idempotent: nothing waits for a retry any more
    expect((await page(portal, `${base()}/retry-waiting`, cookie)).body).toContain('No delivery is waiting for a retry: nothing to send.')
    const again = await formPost(portal, `${base()}/retry-waiting`, cookie)
    expect(again.statusCode).toBe(303)
  })

  it('a POST needs the same origin, and another account gets 404', async () => {
    expect((await formPost(portal, `${base()}/retry-waiting`, cookie, {}, 'https://evil.example')).statusCode).toBe(403)
    const other = await createTestTenant(deps, ACCOUNT_ONLY)
    const otherCookie = await signIn(portal, other.account.id)
    expect((await page(portal, `${base()}/retry-waiting`, otherCookie)).statusCode).toBe(404)
    expect((await formPost(portal, `${base()}/retry-waiting`, otherCookie)).statusCode).toBe(404)
    await other.cleanup()
  })
})

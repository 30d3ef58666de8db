import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RECOVER_COUNT_CAP } from '@lsv/shared/domain/webhooks/recover.ts'
import type { DeliveryRecord } from '@lsv/shared/model/records.ts'
import { ACCOUNT_ONLY, type StoredTenant } from '../helpers/tenant.ts'
import type { Injectable } from '../ingest/support/harness.ts'
import { page, closeSignedInPortal, openSignedInPortal, type SignedInPortal } from './screens-support.ts'

type Deps = SignedInPortal['deps']

const T0 = Date.parse('2026-03-01T10:00:00.000Z')
const at = (ms: number) => new Date(T0 + ms).toISOString()

/**
 * Recover's pages through real HTTP requests when the range holds more deliveries than a page
 * view may read: the failed ones are found through the store's status index however many others
 * are newer (the recover once read only the newest 5000 of the range), and the progress counts
 * stop at RECOVER_COUNT_CAP and say "at least".
 */
describe('portal: recover behind many deliveries', () => {
  let deps: Deps
  let portal: Injectable
  let t: StoredTenant
  let cookie: string

  beforeAll(async () => {
    ;({ deps, portal, t, cookie } = await openSignedInPortal({ ...ACCOUNT_ONLY, integration: { url: 'https://hooks.example.com/recover' } }))
    // two failed deliveries, then RECOVER_COUNT_CAP + 5 succeeded ones after them
    const record = (n: number, status: DeliveryRecord['status'], ms: number): DeliveryRecord => ({
      id: `dlv_${n}_${t.account.id}`,
      account_id: t.account.id,
      integration_id: t.integration.id,
      event_id: `evt_${n}_${t.account.id}`,
      status,
      attempts: [],
      body: '{}',
      next_attempt_at: null,
      created_at: at(ms),
      updated_at: at(ms),
    })
    const rows = [record(0, 'failed', 0), record(1, 'failed', 1)]
    for (let n = 0; n < RECOVER_COUNT_CAP + 5; n++) rows.push(record(n + 2, 'succeeded', 1000 + n))
    // in parallel: the embedded log shares commits between concurrent puts
    await Promise.all(rows.map((d) => deps.deliveries.put(d)))
  })
  afterAll(() => closeSignedInPortal({ deps, portal, t }))

  const recoverPath = () => `/portal/webhooks/${t.integration.id}/recover`

  it('finds the failed deliveries older than 10,000 succeeded ones', async () => {
    const confirm = await page(portal, `${recoverPath()}?since=2026-03-01T10:00`, cookie)
    expect(confirm.statusCode).toBe(200)
    // mutation: planRecover filtering rows itself within the newest 5000 again finds none
    expect(confirm.body).toContain('Replay 2 failed deliveries?')
    expect(confirm.body).toContain('At most 1000 failed deliveries per recover (the newest ones since that time)')
  })

  it('counts each status up to the cap and says "at least" beyond it', async () => {
    const result = await page(portal, `${recoverPath()}/result?since=${encodeURIComponent(at(0))}&found=0&replayed=0`, cookie)
    expect(result.statusCode).toBe(200)
    // mutation: countWords without the cap test shows the bare 10000
    expect(result.body).toMatch(new RegExp(`<dt>Succeeded</dt><dd>at least ${RECOVER_COUNT_CAP}</dd>`))
    expect(result.body).toMatch(/<dt>Failed<\/dt><dd>2<\/dd>/)
    expect(result.body).toContain(`Each status is counted up to ${RECOVER_COUNT_CAP}`)
    // a later time holds fewer than the cap: exact counts, no hint
    const later = await page(portal, `${recoverPath()}/result?since=${encodeURIComponent(at(1000 + 10))}&found=0&replayed=0`, cookie)
    expect(later.body).toMatch(new RegExp(`<dt>Succeeded</dt><dd>${RECOVER_COUNT_CAP - 5}</dd>`))
    expect(later.body).toMatch(/<dt>Failed<\/dt><dd>0<\/dd>/)
    expect(later.body).not.toContain('Each status is counted up to')
  })
})

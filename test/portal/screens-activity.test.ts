import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, body, type IngestFixture } from '../ingest/support/harness.ts'
import { record } from '../ingest/support/tenant.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { signIn } from './support.ts'
import { page } from './screens-support.ts'

/** The text of one table row whose header cell starts with `label` (tags stripped). */
function rowText(html: string, label: string): string {
  const row = html.split('<tr>').map((r) => r.split('</tr>')[0]!).find((r) => r.replace(/<[^>]+>/g, '').startsWith(label))
  return row ? row.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() : ''
}

/**
 * The Activity screen over real edge answers: pushes per day by status (counted after each
 * answer and written in batches), dead-lettered records by reason (counted by the worker), and
 * the current push windows per key and source (read without counting). Scoped to the session.
 */
describe('portal screen: activity', () => {
  let fixture: IngestFixture
  let cookie: string
  let otherCookie: string
  const today = new Date().toISOString().slice(0, 10)

  /** the screen, once the edge's batched counts for `expected` answers have been written */
  const activityShowing = async (expected: RegExp) => {
    for (let i = 0; i < 100; i++) {
      const res = await page(fixture.h.portal, '/portal/activity', cookie)
      if (expected.test(rowText(res.body, today))) return res
      await new Promise((r) => setTimeout(r, 200))
    }
    throw new Error(`activity never showed ${expected}: ${rowText((await page(fixture.h.portal, '/portal/activity', cookie)).body, today)}`)
  }

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    otherCookie = await signIn(fixture.h.portal, fixture.other.account.id)
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('counts pushes per day by answer: 202, 4xx by status, 429; another account sees none of them', async () => {
    const { edge } = fixture.h
    const t = fixture.t
    expect((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(1)]) })).statusCode).toBe(202)
    expect((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: '{"contacts": [' })).statusCode).toBe(400)
    expect((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: { ...t.keyHeaders(), authorization: 'Bearer lsk_wrong' }, payload: body([record(2)]) })).statusCode).toBe(401)
    // the key's 60 s window holds 120: 118 more are admitted, then 429
    const statuses: number[] = []
    for (let i = 0; i < 121; i++) statuses.push((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(i)]) })).statusCode)
    const accepted = statuses.filter((s) => s === 202).length + 1
    const limited = statuses.filter((s) => s === 429).length
    // two windows can meet inside the loop; whatever the split, every answer is counted once
    expect(accepted + limited + 1).toBe(123)
    const res = await activityShowing(new RegExp(`^${today} ${accepted} 1 1 ${limited} ${accepted + limited + 2}$`))
    expect(res.body).toContain('202 accepted')
    expect(res.body).toContain('429 rate limited')
    expect(res.body).toContain('401 unauthorized')
    // windows now: the key's 60 s window, the source's (untouched)
    expect(rowText(res.body, 'API key')).toMatch(/of 120/)
    expect(rowText(res.body, 'Source')).toMatch(/^Source: .* 0 of 120 .* 0 of 50000/)
    const other = await page(fixture.h.portal, '/portal/activity', otherCookie)
    expect(other.body).toContain('No pushes in the last 7 days.')
  })

  it('shows records dead-lettered, with the reason in words', async () => {
    const result = await handleBatchMessage(fixture.h.deps, {
      id: 'm-1', data: Buffer.from('{}'), deliveryAttempt: 1, publishedAt: new Date().toISOString(),
      attributes: { v: '99', account_id: fixture.t.account.id },
    })
    expect(result).toBe('ack')
    const res = await page(fixture.h.portal, '/portal/activity', cookie)
    expect(rowText(res.body.slice(res.body.indexOf('dead-h')), today)).toMatch(/^\S+ 1 unreadable ?: A whole batch could not be read/)
    expect((await page(fixture.h.portal, '/portal/activity', otherCookie)).body).toContain('No records were dead-lettered')
  })

  it('needs a session', async () => {
    const res = await fixture.h.portal.inject({ method: 'GET', url: '/portal/activity' })
    expect(res.statusCode).toBe(303)
  })
})

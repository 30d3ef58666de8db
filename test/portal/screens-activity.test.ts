import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, body, type IngestFixture, record } from '../ingest/support/harness.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { signIn } from './support.ts'
import { page, PORTAL_ORIGIN } from './screens-support.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'

/** The text of one table row whose header cell starts with `label` (tags stripped). */
function rowText(html: string, label: string): string {
  const row = html
    .split('<tr>')
    .map((r) => r.split('</tr>')[0]!)
    .find((r) => r.replace(/<[^>]+>/g, '').startsWith(label))
  return row
    ? row
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
    : ''
}

/** Today's pushes by column header (e.g. `202 accepted`) in the pushes table; {} without a row today. */
function todayCounts(html: string, today: string): Record<string, number> {
  const table = html.slice(html.indexOf('id="pushes-h"'), html.indexOf('id="dead-h"'))
  const headers = [...table.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1]!).slice(1)
  const row = new RegExp(`<th scope="row">${today}</th>((?:<td[^>]*>\\d+</td>)+)`).exec(table)
  if (!row) return {}
  const cells = [...row[1]!.matchAll(/<td[^>]*>(\d+)<\/td>/g)].map((m) => Number(m[1]))
  return Object.fromEntries(headers.map((h, i) => [h, cells[i]!]))
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
    expect(
      (
        await edge.inject({
          method: 'POST',
          url: '/v1/contacts',
          headers: { ...t.keyHeaders(), authorization: 'Bearer lsk_wrong' },
          payload: body([record(2)]),
        })
      ).statusCode,
    ).toBe(401)
    // the key's 60 s window holds 120: 118 more are admitted, then 429
    const statuses: number[] = []
    for (let i = 0; i < 121; i++)
      statuses.push((await edge.inject({ method: 'POST', url: '/v1/contacts', headers: t.keyHeaders(), payload: body([record(i)]) })).statusCode)
    const accepted = statuses.filter((s) => s === 202).length + 1
    const limited = statuses.filter((s) => s === 429).length
    // two windows can meet inside the loop; whatever the split, every answer is counted once
    expect(accepted + limited + 1).toBe(123)
    // when two windows met and nothing was limited, the page has no 429 column at all (it lists the answers seen)
    const limitedCell = limited === 0 ? '(?: 0)?' : ` ${limited}`
    const res = await activityShowing(new RegExp(`^${today} ${accepted} 1 1${limitedCell} ${accepted + limited + 2}$`))
    expect(res.body).toContain('202 accepted')
    if (limited > 0) expect(res.body).toContain('429 rate limited')
    expect(res.body).toContain('401 unauthorized')
    // windows now: the key's 60 s window, the source's (untouched)
    expect(rowText(res.body, 'API key')).toMatch(/of 120/)
    expect(rowText(res.body, 'Source')).toMatch(/^Source: .* 0 of 120 .* 0 of 50000/)
    // when each window resets: through the one time helper (docs/portal.md, "Times and ids"), not a bare clock time
    expect(res.body).toMatch(/resets <time class="ago" datetime="\d{4}-\d\d-\d\dT[^"]+Z" title="[^"]+">/)
    expect(res.body).not.toMatch(/resets <time datetime=/)
    const other = await page(fixture.h.portal, '/portal/activity', otherCookie)
    expect(other.body).toContain('No pushes in the last 7 days.')
  })

  it('shows records dead-lettered, with the reason in words', async () => {
    const result = await handleBatchMessage(fixture.h.deps, {
      id: 'm-1',
      data: Buffer.from('{}'),
      deliveryAttempt: 1,
      publishedAt: new Date().toISOString(),
      attributes: { v: '99', account_id: fixture.t.account.id },
    })
    expect(result).toBe('ack')
    const res = await page(fixture.h.portal, '/portal/activity', cookie)
    expect(rowText(res.body.slice(res.body.indexOf('dead-h')), today)).toMatch(/^\S+ 1 unreadable ?: A whole batch could not be read/)
    expect((await page(fixture.h.portal, '/portal/activity', otherCookie)).body).toContain('No records were dead-lettered')
  })

  it("counts the portal's push fallbacks too (session, key, source token; 200 when stored at once) and shows the sessions' window", async () => {
    const t = fixture.t
    const { portal } = fixture.h
    const before = todayCounts((await page(portal, '/portal/activity', cookie)).body, today)
    // a key of its own: the first test filled the other key's 60 s window
    const issued = await portal.inject({
      method: 'POST',
      url: `${ADMIN}/${t.account.id}/connections/${t.api.id}/keys`,
      headers: OPERATOR,
      payload: { scopes: ['contacts:write'] },
    })
    expect(issued.statusCode, issued.body).toBe(201)
    const key = issued.json().key as string
    const fallback = (headers: Record<string, string>, payload: string, url = '/api/contacts') =>
      portal.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload })
    const session = { cookie, origin: PORTAL_ORIGIN }

    expect((await fallback(session, body([record(900)]))).statusCode).toBe(202)
    expect((await fallback({ authorization: `Bearer ${key}` }, body([record(901)]))).statusCode).toBe(202)
    expect((await fallback({ authorization: `Bearer ${key}` }, '{"contacts": [')).statusCode).toBe(400)
    expect((await fallback({ 'x-webhook-token': t.sourceToken }, body([record(902)]), `/api/contacts/webhook/${t.webhook.id}`)).statusCode).toBe(202)
    // a key nobody has names no account: its 401 is counted nowhere
    expect((await fallback({ authorization: 'Bearer lsk_wrong' }, body([record(903)]))).statusCode).toBe(401)
    // the queue down: the batch is upserted at once, 200
    fixture.h.q.state.refuse = true
    try {
      expect((await fallback(session, body([record(904)]))).statusCode).toBe(200)
    } finally {
      fixture.h.q.state.refuse = false
    }

    let after: Record<string, number> = {}
    for (let i = 0; i < 100; i++) {
      const res = await page(portal, '/portal/activity', cookie)
      after = todayCounts(res.body, today)
      if (after['202 accepted'] === (before['202 accepted'] ?? 0) + 3 && after['200 stored at once'] === 1) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(after['202 accepted']).toBe((before['202 accepted'] ?? 0) + 3)
    expect(after['200 stored at once']).toBe(1)
    expect(after['400 invalid']).toBe((before['400 invalid'] ?? 0) + 1)
    expect(after['401 unauthorized']).toBe(before['401 unauthorized'] ?? 0)
    expect(after.Total).toBe((before.Total ?? 0) + 5)

    // the sessions' one window: both session pushes (24 h window; the 60 s one may have rolled over)
    const res = await page(portal, '/portal/activity', cookie)
    expect(rowText(res.body, 'Portal sessions')).toMatch(/^Portal sessions: same-origin pushes to \/api\/contacts .* of 120 .* 2 of 50000/)
    expect(rowText((await page(portal, '/portal/activity', otherCookie)).body, 'Portal sessions')).toMatch(/ 0 of 50000/)
    expect(todayCounts((await page(portal, '/portal/activity', otherCookie)).body, today)).toEqual({})
  })

  it('needs a session', async () => {
    const res = await fixture.h.portal.inject({ method: 'GET', url: '/portal/activity' })
    expect(res.statusCode).toBe(303)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { FALLBACK_MAPPINGS } from '@lsv/shared/domain/ingest/mapping.ts'
import { MAX_SAMPLE_BYTES, readPushSample } from '@lsv/shared/domain/activity/push-sample.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { body, createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { page, PORTAL_ORIGIN } from './screens-support.ts'

/**
 * Issue 22, defect 1: saving the first mapping ended the six-field fallback without a word, and
 * pushes kept getting 202 while email and names were dropped. Through app.inject as a browser
 * sends it: the editor starts from the fallback's rows, saving answers 303 to a review of the
 * change on the last real push (stored by the edge, push-sample.ts), only the review's form
 * applies it, and the connection page counts the keys the mappings drop.
 */
describe('portal: field mapping review (issue 22, defect 1)', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  let cookie = ''

  /** a form post with repeated names (the editor's rows), urlencoded, same origin */
  const post = (url: string, fields: Array<[string, string]>, as = cookie) =>
    h.portal.inject({
      method: 'POST',
      url,
      headers: { cookie: as, origin: PORTAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    })
  const rowsOf = (mappings: ReadonlyArray<{ from: string; to: string }>): Array<[string, string]> =>
    mappings.flatMap((m) => [
      ['from', m.from],
      ['to', m.to],
    ])
  const mappingsPath = () => `/portal/connections/${t.apiConnectionId}/mappings`
  /** pushes through an edge app of its own and closes it: its recorder's flush stores the sample now */
  const pushAndFlush = async (contacts: unknown[], tenant = t) => {
    const edge = await buildEdge(h.deps)
    const before = h.q.batches().length
    const res = await edge.inject({ method: 'POST', url: '/v1/contacts', headers: tenant.keyHeaders(), payload: body(contacts) })
    expect(res.statusCode, res.body).toBe(202)
    await edge.close()
    return h.q.batches()[before]!
  }
  const storedMappings = async () => (await h.deps.tenants.getConnection(t.apiConnectionId))!.field_mappings

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    other = await createTestTenant(h.deps)
    cookie = await signIn(h.portal, t.accountId)
    await h.deps.tenants.createCustomField({ account_id: t.accountId, key: 'plan', label: 'Plan', type: 'text', created_at: new Date().toISOString() })
  })
  afterAll(async () => {
    await t?.cleanup()
    await other?.cleanup()
    await h?.close()
  })

  it('the editor of a connection without mappings starts from the six fallback fields as explicit rows', async () => {
    // mutation: editorRows (views.ts) returning the saved rows only (none) leaves the editor empty
    expect(await storedMappings()).toEqual([])
    const res = await page(h.portal, `/portal/connections/${t.apiConnectionId}`, cookie)
    expect(res.statusCode).toBe(200)
    const editor = /<form[^>]*id="mapping-form"[\s\S]*?<\/form>/.exec(res.body)![0]
    for (const m of FALLBACK_MAPPINGS) {
      expect(editor).toMatch(new RegExp(`name="from" value="${m.from}"[\\s\\S]*?<option value="${m.to}" selected>`))
    }
  })

  it('saving answers 303 to a review of the last real push, now and after, and stores nothing until applied', async () => {
    const record = { email: 'Ann@Example.com', first_name: 'Ann', last_name: 'Lee', external_id: 'rv-1', Plan: 'gold', shoe_size: 44 }
    const batch = await pushAndFlush([record, { external_id: 'rv-2', email: 'bo@example.com', shoe_size: 40 }])
    expect((await readPushSample(h.deps, t.apiConnectionId))?.record).toEqual(record)

    // the trap of issue 22: only a custom field row (the fallback rows removed)
    const saved = await post(mappingsPath(), [...rowsOf([{ from: 'Plan', to: 'custom_fields.plan' }]), ['action', 'save']])
    // mutation: the old save (updateConnection, then 303 to the connection) stores the row here
    expect(saved.statusCode).toBe(303)
    expect(saved.headers.location).toMatch(new RegExp(`^/portal/connections/${t.apiConnectionId}/mappings/review\\?`))
    expect(await storedMappings()).toEqual([])

    const review = await page(h.portal, saved.headers.location!, cookie)
    expect(review.statusCode).toBe(200)
    expect(review.body).toContain('The six-field fallback ends')
    // mutation: a review without the sample (or mapping both sides with the same rows) names no loss
    const lost = /<div class="error-summary" role="alert" id="lost">([\s\S]*?)<\/div>/.exec(review.body)
    expect(lost, 'the loss is named').not.toBeNull()
    for (const f of ['email', 'first_name', 'last_name', 'full_name']) expect(lost![1]).toContain(`<code>${f}</code>`)
    // the record's own external_id key stays the anchor while no mapping names one
    expect(lost![1]).not.toContain('<code>external_id</code>')
    const table = /<table id="side-by-side">[\s\S]*?<\/table>/.exec(review.body)![0]
    expect(table).toMatch(
      /<code>email<\/code><\/th><td data-label="Now"><code>ann@example.com<\/code><\/td><td data-label="After saving"><strong>not stored<\/strong>/,
    )
    expect(table).toMatch(/<code>custom_fields.plan<\/code><\/th><td data-label="Now">—<\/td><td data-label="After saving"><code>&quot;gold&quot;<\/code>/)

    // walking away stores nothing; the worker still maps with the fallback
    expect(await handleBatchMessage(h.deps, batch)).toBe('ack')
    expect((await h.deps.contacts.getByAnchor(t.accountId, t.apiSource, 'rv-1'))?.business_email).toBe('ann@example.com')

    // the fallback rows kept plus the custom row: nothing lost
    const safe = await post(mappingsPath(), [...rowsOf([...FALLBACK_MAPPINGS, { from: 'Plan', to: 'custom_fields.plan' }]), ['action', 'save']])
    const safeReview = await page(h.portal, safe.headers.location!, cookie)
    expect(safeReview.body).toContain('<p id="lost">Nothing this push stores now would be lost.</p>')
    const applyForm = /<form method="post" action="([^"]+\/mappings\/apply)"[\s\S]*?<\/form>/.exec(safeReview.body)!
    const fields = [...applyForm[0].matchAll(/<input type="hidden" name="(from|to)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!] as [string, string])
    const applied = await post(applyForm[1]!, fields)
    expect(applied.statusCode).toBe(303)
    expect(applied.headers.location).toBe(`/portal/connections/${t.apiConnectionId}?flash=mappings-saved`)
    expect(await storedMappings()).toEqual([...FALLBACK_MAPPINGS, { from: 'Plan', to: 'custom_fields.plan' }])
  })

  it('the connection page counts the keys recent pushes carried that no mapping reads', async () => {
    // after the previous test: the fallback rows plus Plan; shoe_size is in both records, Plan in one
    const res = await page(h.portal, `/portal/connections/${t.apiConnectionId}`, cookie)
    const table = /<table id="dropped-keys">[\s\S]*?<\/table>/.exec(res.body)
    // mutation: no dropped-keys section (or the sample not recorded by the edge) fails here
    expect(table, 'the dropped keys are listed').not.toBeNull()
    expect(table![0]).toContain('Keys in 2 records of 1 pushes')
    expect(table![0]).toMatch(/<td data-label="Key"><code>shoe_size<\/code><\/td><td data-label="Records with it">2<\/td>/)
    // mutation: keyReader ignoring the saved mappings would list Plan and email as dropped
    expect(table![0]).not.toContain('<code>Plan</code>')
    expect(table![0]).not.toContain('<code>email</code>')
  })

  it('a sample over the size cap is not kept, counts still are; another account sees neither', async () => {
    await pushAndFlush([{ external_id: 'big', notes: 'x'.repeat(MAX_SAMPLE_BYTES) }])
    const sample = await readPushSample(h.deps, t.apiConnectionId)
    // mutation: dropping the size check in mergeSample keeps the record
    expect(sample?.record).toBeNull()
    expect(sample?.record_omitted).toBe(true)
    expect(sample?.keys.notes).toBe(1)
    expect(sample?.keys.shoe_size).toBe(2)
    const otherCookie = await signIn(h.portal, other.accountId)
    expect((await page(h.portal, `/portal/connections/${t.apiConnectionId}/mappings/review?rows=0`, otherCookie)).statusCode).toBe(404)
    expect((await post(mappingsPath(), [...rowsOf(FALLBACK_MAPPINGS), ['action', 'save']], otherCookie)).statusCode).toBe(404)
    expect((await post(`${mappingsPath()}/apply`, rowsOf([{ from: 'a', to: 'email' }]), otherCookie)).statusCode).toBe(404)
    // the applying form is same-origin only, like every portal form
    const crossSite = await h.portal.inject({
      method: 'POST',
      url: `${mappingsPath()}/apply`,
      headers: { cookie, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(rowsOf([{ from: 'a', to: 'email' }])).toString(),
    })
    expect(crossSite.statusCode).toBe(403)
    expect(await storedMappings()).toEqual([...FALLBACK_MAPPINGS, { from: 'Plan', to: 'custom_fields.plan' }])
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FALLBACK_MAPPINGS } from '@lsv/shared/domain/ingest/mapping.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { signIn } from './support.ts'
import { page, PORTAL_ORIGIN } from './screens-support.ts'

/**
 * Issue 29, D6: the mapping editor's round trip through the review keeps every row and the pasted
 * sample, and rows are added and removed without retyping the others, with no script (submit
 * buttons of the editor's own form that answer the editor again). Through app.inject as a
 * browser sends the forms; test/browser/mapping.test.ts walks the same in Chromium.
 */
describe('portal: mapping rows and sample kept (issue 29, D6)', () => {
  let h: Harness
  let t: StoredTenant
  let other: StoredTenant
  let cookie = ''

  const post = (url: string, fields: Array<[string, string]>, as = cookie) =>
    h.portal.inject({
      method: 'POST',
      url,
      headers: { cookie: as, origin: PORTAL_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    })
  const rowFields = (rows: ReadonlyArray<{ from: string; to: string }>): Array<[string, string]> =>
    rows.flatMap((m) => [
      ['from', m.from],
      ['to', m.to],
    ])
  const base = () => `/portal/connections/${t.apiConnectionId}`
  /** the editor's rows as shown: each key and its selected target, in order */
  const shownRows = (body: string) => {
    const editor = /<form[^>]*id="mapping-form"[\s\S]*?<\/form>/.exec(body)![0]
    return [
      ...editor.matchAll(/<tr><td[^>]*>[\s\S]*?name="from" value="([^"]*)"[\s\S]*?<select[^>]*>[\s\S]*?(?:<option value="([^"]*)" selected>|<\/select>)/g),
    ].map((m) => ({
      from: m[1]!.replace(/&amp;/g, '&'),
      to: m[2] ?? '',
    }))
  }
  const shownSample = (body: string) =>
    /<textarea id="sample"[^>]*>([\s\S]*?)<\/textarea>/
      .exec(body)![1]!
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&')
  const storedMappings = async () => (await h.deps.tenants.getConnection(t.apiConnectionId))!.field_mappings
  const sample = JSON.stringify({ external_id: 'd6-1', email: 'ann@example.com', Tier: 'gold & "silver"' })

  beforeAll(async () => {
    h = await createHarness()
    t = await createTestTenant(h.deps)
    other = await createTestTenant(h.deps)
    cookie = await signIn(h.portal, t.accountId)
    await h.deps.tenants.createCustomField({ account_id: t.accountId, key: 'tier', label: 'Tier', type: 'text', created_at: new Date().toISOString() })
  })
  afterAll(async () => {
    await t?.cleanup()
    await other?.cleanup()
    await h?.close()
  })

  it('the editor offers Add a row and a Remove per row; Enter previews (the form’s first button), never removes a row', async () => {
    const res = await page(h.portal, base(), cookie)
    const editor = /<form[^>]*id="mapping-form"[\s\S]*?<\/form>/.exec(res.body)![0]
    // the six fallback rows and two blank ones, each with its Remove
    expect(shownRows(res.body)).toHaveLength(FALLBACK_MAPPINGS.length + 2)
    expect(editor.match(/value="remove-\d+" formaction="[^"]+\/mappings\/rows"/g)).toHaveLength(FALLBACK_MAPPINGS.length + 2)
    expect(editor).toContain('>Remove<span class="visually-hidden"> row 1</span></button>')
    expect(editor).toContain(`value="add-row" formaction="${base()}/mappings/rows"`)
    // mutation: without the hidden first button, Enter in a key field presses row 1's Remove
    const firstButton = /<button[^>]*>/.exec(editor)![0]
    expect(firstButton).toContain('value="preview"')
    expect(firstButton).toContain('hidden')
  })

  it('Add a row and Remove answer the editor with every typed row, blank ones included, and the sample; nothing is stored', async () => {
    const typed = [
      { from: 'email', to: 'email' },
      { from: '', to: '' },
      { from: 'Tier', to: 'custom_fields.tier' },
      { from: 'customer ref', to: 'external_id' },
    ]
    const added = await post(`${base()}/mappings/rows`, [...rowFields(typed), ['sample', sample], ['action', 'add-row']])
    expect(added.statusCode, added.body.slice(0, 300)).toBe(200)
    // mutation: the rows re-read through rowsOf (blank ones dropped) or the fallback shown again
    expect(shownRows(added.body)).toEqual([...typed, { from: '', to: '' }])
    expect(shownSample(added.body)).toBe(sample)
    // the new row's key takes focus (no script: autofocus)
    expect(added.body).toMatch(/<label[^>]*>From, row 5<\/label><input type="text" id="[^"]+" name="from" value="" autofocus>/)

    const removed = await post(`${base()}/mappings/rows`, [...rowFields(typed), ['sample', sample], ['action', 'remove-2']])
    expect(removed.statusCode).toBe(200)
    // mutation: removing by the wrong index (or every row after it) fails here
    expect(shownRows(removed.body)).toEqual([typed[0], typed[1], typed[3]])
    expect(shownSample(removed.body)).toBe(sample)
    expect(await storedMappings()).toEqual([])
  })

  it('Save carries the rows and the sample to the review, and "Back to the editor" brings both back', async () => {
    const rows = [...FALLBACK_MAPPINGS, { from: 'Tier', to: 'custom_fields.tier' }]
    const saved = await post(`${base()}/mappings`, [...rowFields(rows), ['sample', sample], ['action', 'save']])
    expect(saved.statusCode).toBe(303)
    const review = new URL(saved.headers.location!, 'http://portal.test')
    expect(review.pathname).toBe(`${base()}/mappings/review`)
    // mutation: the review's address without the sample (the defect) fails here
    expect(review.searchParams.get('sample')).toBe(sample)
    const reviewPage = await page(h.portal, saved.headers.location!, cookie)
    expect(reviewPage.statusCode).toBe(200)
    const back = /<a href="([^"]+)">Back to the editor<\/a>/.exec(reviewPage.body)![1]!.replace(/&amp;/g, '&')
    const editor = await page(h.portal, back.replace(/#.*$/, ''), cookie)
    expect(editor.statusCode).toBe(200)
    // every row as proposed (then the two blank rows), and the sample as pasted
    expect(shownRows(editor.body)).toEqual([...rows, { from: '', to: '' }, { from: '', to: '' }])
    expect(shownSample(editor.body)).toBe(sample)
    expect(await storedMappings()).toEqual([])
  })

  it('a save that ends the fallback offers the editor with the fallback rows put back, the sample kept', async () => {
    const saved = await post(`${base()}/mappings`, [...rowFields([{ from: 'Tier', to: 'custom_fields.tier' }]), ['sample', sample], ['action', 'save']])
    const reviewPage = await page(h.portal, saved.headers.location!, cookie)
    // mutation: no such link (the defect: six rows to retype) fails here
    const restore = /<a href="([^"]+)">Edit again with the fallback rows put back<\/a>/.exec(reviewPage.body)
    expect(restore, 'the link that puts the fallback rows back').not.toBeNull()
    const editor = await page(h.portal, restore![1]!.replace(/&amp;/g, '&').replace(/#.*$/, ''), cookie)
    expect(shownRows(editor.body)).toEqual([...FALLBACK_MAPPINGS, { from: 'Tier', to: 'custom_fields.tier' }, { from: '', to: '' }, { from: '', to: '' }])
    expect(shownSample(editor.body)).toBe(sample)
    // a proposal that keeps them all is offered no such link
    const safe = await post(`${base()}/mappings`, [...rowFields([...FALLBACK_MAPPINGS, { from: 'Tier', to: 'custom_fields.tier' }]), ['action', 'save']])
    expect((await page(h.portal, safe.headers.location!, cookie)).body).not.toContain('Edit again with the fallback rows put back')
  })

  it('a sample too long for the address is said to be left behind, next to its field, not dropped without a word', async () => {
    const long = JSON.stringify({ external_id: 'd6-2', notes: 'x'.repeat(20_000) })
    const saved = await post(`${base()}/mappings`, [...rowFields(FALLBACK_MAPPINGS), ['sample', long], ['action', 'save']])
    expect(saved.statusCode).toBe(303)
    // the address stays within what the server reads (16 KiB of request line and headers)
    expect(saved.headers.location!.length).toBeLessThan(8 * 1024)
    const reviewPage = await page(h.portal, saved.headers.location!, cookie)
    expect(reviewPage.statusCode).toBe(200)
    const back = /<a href="([^"]+)">Back to the editor<\/a>/.exec(reviewPage.body)![1]!.replace(/&amp;/g, '&')
    const editor = await page(h.portal, back.replace(/#.*$/, ''), cookie)
    expect(shownRows(editor.body)).toEqual([...FALLBACK_MAPPINGS, { from: '', to: '' }, { from: '', to: '' }])
    expect(editor.body).toContain(
      '<p class="field-error" id="sample-not-kept">The sample you pasted was too long to come back from the review: paste it again to preview.</p>',
    )
    expect(editor.body).toMatch(/<textarea id="sample" name="sample" aria-describedby="sample-hint sample-not-kept">/)
  })

  it("another account's connection is 404 for Add a row and Remove, as for the editor's other forms", async () => {
    const otherCookie = await signIn(h.portal, other.accountId)
    const res = await post(`${base()}/mappings/rows`, [...rowFields(FALLBACK_MAPPINGS), ['action', 'add-row']], otherCookie)
    expect(res.statusCode).toBe(404)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomBytes } from 'node:crypto'
import { createDelivery } from '@lsv/shared/domain/webhooks/deliveries.ts'
import { closeSignedInPortal, formPost, openSignedInPortal, page, type SignedInPortal } from './screens-support.ts'

/**
 * Issue 29, "Looks", through real HTTP pages (app.inject): what the portal's kit does to every
 * page. JSON bodies readable (indented, long parts foldable without script, values as written,
 * escaped) and anything else as text; every table cell labelled with its column for narrow
 * screens; help to one line with "More"; a refused form's error summary linking its fields; the
 * confirmation after a post focused.
 */
describe('portal kit: bodies, tables, help, error summary, focus', () => {
  let s: SignedInPortal
  const get = async (url: string) => {
    const res = await page(s.portal, url, s.cookie)
    expect(res.statusCode, res.body).toBe(200)
    return res.body
  }

  beforeAll(async () => {
    s = await openSignedInPortal({ integration: { url: 'https://receiver.example/hook' } })
  })
  afterAll(async () => {
    await closeSignedInPortal(s)
  })

  /** a delivery whose one attempt the receiver answered with `excerpt` */
  const deliveryAnswered = async (excerpt: string, body = `{"id":"evt_${randomBytes(4).toString('hex')}"}`) => {
    const eventId = `evt_${randomBytes(6).toString('hex')}`
    const d = await createDelivery(s.deps, { accountId: s.t.account.id, integrationId: s.t.integrationId, eventId, body, now: new Date().toISOString() })
    await s.deps.deliveries.put({
      ...d,
      status: 'failed',
      next_attempt_at: null,
      attempts: [{ attempt: 1, at: new Date().toISOString(), status_code: 500, error: null, latency_ms: 3, response_excerpt: excerpt }],
    })
    return get(`/portal/webhooks/${s.t.integrationId}/deliveries/${d.id}`)
  }

  // mutation: jsonView back to a plain <pre> of the text → no .json, no json-members, no details
  it('a JSON body is indented, its long objects foldable without script, every value as written and escaped', async () => {
    const members = Array.from({ length: 10 }, (_, i) => `"k${i}":${i}`).join(',')
    const excerpt = `{"error":"<script>alert(1)</script>","big":12345678901234567890,"esc":"a\\"b","nested":{${members}},"list":[]}`
    const html = await deliveryAnswered(excerpt)
    const view = /<figure class="json" aria-label="Response body of attempt 1">([\s\S]*?)<\/figure><details class="exact">/.exec(html)
    expect(view, 'the readable view of the response body').not.toBeNull()
    const v = view![1]!
    // escaped: the value's markup is text
    expect(v).toContain('&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;')
    expect(html).not.toContain('<script>alert(1)')
    // as written: every digit, and the string's own escape
    expect(v).toContain('12345678901234567890')
    expect(v).toContain('&quot;a\\&quot;b&quot;')
    // indented: one member a line, inside the object's members block
    expect(v).toMatch(/<div class="json-members"><div class="json-line"><span class="json-key">&quot;error&quot;<\/span>: /)
    // the whole body is longer than 8 lines, and so is "nested": each folds (open), saying what it holds when folded
    expect(v).toMatch(/^<details class="json-fold" open><summary>\{<span class="json-folded"> 5 keys \}<\/span><\/summary>/)
    expect(v).toContain(
      '<details class="json-fold" open><summary><span class="json-key">&quot;nested&quot;</span>: {<span class="json-folded"> 10 keys },</span></summary>',
    )
    // a short one does not fold
    expect(v).toContain('<div class="json-line"><span class="json-key">&quot;list&quot;</span>: []</div>')
    // and the exact text is kept, under its own disclosure
    expect(html).toContain('<summary>Exact text</summary>')
  })

  it('a body that is not JSON (a cut-off excerpt, an HTML page) is its text, escaped', async () => {
    const html = await deliveryAnswered('<html><body onload="x()">{"half": ')
    expect(html).toContain(
      '<pre class="code" tabindex="0" aria-label="Response body of attempt 1"><code>&lt;html&gt;&lt;body onload=&quot;x()&quot;&gt;{&quot;half&quot;: </code></pre>',
    )
    expect(html).not.toContain('<body onload')
  })

  // the signed request's body: readable, and its exact bytes kept for the Copy button and the signature check
  it("the signed request's body is readable, and its exact bytes stay in #signed-body", async () => {
    const body = '{"type":"visitor.identified","data":{"name":"<b>Ann</b>"}}'
    const html = await deliveryAnswered('ok', body)
    expect(html).toContain('<figure class="json" aria-label="Body">')
    expect(html).toContain(
      '<code id="signed-body">{&quot;type&quot;:&quot;visitor.identified&quot;,&quot;data&quot;:{&quot;name&quot;:&quot;&lt;b&gt;Ann&lt;/b&gt;&quot;}}</code>',
    )
  })

  // mutation: labelTableCells not run by sendPage → cells without data-label
  it('every body cell says its column (for stacked rows at 390 px); a row header is its row title', async () => {
    expect((await formPost(s.portal, '/portal/settings/custom-fields', s.cookie, { key: 'tier_x', label: 'Tier <x>', type: 'text' })).statusCode).toBe(303)
    const settings = await get('/portal/settings')
    expect(settings).toContain(
      '<td data-label="Key"><code>tier_x</code></td><td data-label="Label">Tier &lt;x&gt;</td><td data-label="Type">text</td><td data-label="Created">',
    )
    const audit = await get('/portal/audit')
    expect(audit).toMatch(/<tr><td data-label="When \(UTC\)"><time /)
    // every td of every table on these pages has its label
    for (const html of [settings, audit]) expect(html.match(/<td(?![^>]*data-label)[^>]*>/g) ?? []).toEqual([])
  })

  // mutation: the dead-letter paragraph written out whole again → no "More" disclosure
  it('help is one line, the rest behind "More" (a <details>, no script)', async () => {
    const activity = await get('/portal/activity')
    expect(activity).toContain(
      '<div class="help"><p class="hint">Records accepted by the edge that could not be stored.</p> <details class="more"><summary>More</summary><div class="hint">They are kept on the dead-letter topic',
    )
  })

  // mutation: sendPage without problemsOf/errorSummary → only the field's own error, far below
  it('a refused form: "There is a problem" at the top, focused on load, linking each error to its field', async () => {
    const res = await formPost(s.portal, '/portal/settings/custom-fields', s.cookie, { key: 'Bad Key', label: '', type: 'text' })
    expect(res.statusCode).toBe(400)
    const summary = /<div class="error-summary" id="error-summary" tabindex="-1" autofocus aria-labelledby="error-summary-h">([\s\S]*?)<\/div>\n<\/div>/.exec(
      res.body,
    )
    expect(summary, 'the error summary').not.toBeNull()
    expect(summary![1]).toContain('<h2 id="error-summary-h">There is a problem</h2>')
    // before the screen's first section: at the top
    expect(res.body.indexOf('id="error-summary"')).toBeLessThan(res.body.indexOf('id="dom-h"'))
    const links = [...summary![1]!.matchAll(/<li><a href="#([^"]+)">([^<]+)<\/a><\/li>/g)].map((m) => ({ id: m[1]!, text: m[2]! }))
    expect(links).toHaveLength(2)
    for (const l of links) {
      // each link names a field of the form that carries that error
      const field = new RegExp(`<input[^>]* id="${l.id}"[^>]*aria-describedby="([^"]+)"[^>]*aria-invalid="true">`).exec(res.body)
      expect(field, `the field #${l.id}`).not.toBeNull()
      const errorId = field![1]!.split(' ').find((id) => id.endsWith('-error'))!
      expect(res.body).toContain(`<p class="field-error" id="${errorId}">${l.text}</p>`)
    }
    // nothing else on the page takes focus on load
    expect(res.body.match(/autofocus/g)).toHaveLength(1)
  })

  it('a form-wide refusal with no field is in the summary too, linking to where the form says it', async () => {
    const again = await formPost(s.portal, '/portal/settings/custom-fields', s.cookie, { key: 'tier_x', label: 'Again', type: 'text' })
    expect(again.statusCode).toBe(400)
    const link = /<div class="error-summary"[\s\S]*?<li><a href="#([^"]+)">([^<]+)<\/a>/.exec(again.body)
    expect(link).not.toBeNull()
    expect(again.body).toContain(`<p class="field-error" id="${link![1]}">${link![2]}</p>`)
  })

  // mutation: the flash without tabindex/autofocus (kit/page.ts resultOf)
  it('after a post, the page it leads to focuses its confirmation; without a post, nothing is focused', async () => {
    const saved = await formPost(s.portal, '/portal/settings/domains', s.cookie, { domains: 'example.com' })
    expect(saved.statusCode).toBe(303)
    const after = await get(String(saved.headers.location))
    expect(after).toContain('<p class="flash" id="flash" role="status" tabindex="-1" autofocus>Authorized domains saved.</p>')
    expect(await get('/portal/settings')).not.toContain('autofocus')
  })
})

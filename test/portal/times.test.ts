import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal } from './reveal-support.ts'

/**
 * The portal's one time format (docs/portal.md, "Times"): every instant a screen shows is a
 * `<time>` with the ISO instant in `datetime`, relative words from the server's clock, and the
 * exact UTC text in the title and as visually hidden text. No raw ISO timestamp anywhere else.
 */
describe('portal: one time format', () => {
  let fixture: IngestFixture
  let cookie: string
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let paths: string[]

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    receiver = await startReceiver(() => ({ status: 500, body: 'down' }))
    const answer = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: `${receiver.url}?t=1`, payload_version: '2' })
    const revealed = await followReveal(fixture.h.portal, answer, cookie)
    const integrationId = /href="\/portal\/webhooks\/([^"#?/]+)"/.exec(revealed.body)![1]!
    const delivery = await sendTestEvent(fixture.h.deps, fixture.t.account.id, integrationId)
    await drainDueTasks(fixture.h.deps)
    paths = [
      '/portal/',
      '/portal/webhooks',
      `/portal/webhooks/${integrationId}`,
      `/portal/webhooks/${integrationId}/deliveries/${delivery.id}`,
      '/portal/audit',
      '/portal/activity',
      '/portal/settings',
      '/portal/connections',
    ]
  })
  afterAll(async () => {
    await receiver?.close()
    await fixture?.close()
  })

  it('a long id in a table is one cut line with the whole id in its title and text, and a Copy button for portal.js', async () => {
    const res = await page(fixture.h.portal, paths[2]!, cookie)
    const m =
      /<td[^>]*><code class="id" id="([^"]+)" title="([^"]+)">([^<]+)<\/code><button type="button" class="copy small" data-copy-target="([^"]+)" aria-label="Copy event id ([^"]+)" hidden>Copy<\/button>/.exec(
        res.body,
      )
    expect(m, 'the delivery log names its event ids through longId').not.toBeNull()
    const [, elementId, title, text, target, named] = m!
    expect(target).toBe(elementId)
    expect(text).toBe(title)
    expect(named).toBe(title)
  })

  it('shows no raw ISO timestamp outside datetime= (and form values); its times read relative, with the exact UTC text kept', async () => {
    let times = 0
    for (const path of paths) {
      const res = await page(fixture.h.portal, path, cookie)
      expect(res.statusCode, path).toBe(200)
      // a form's value (a time filter) and the bodies a debugger quotes are data, not shown times
      const shown = res.body
        .replace(/ (datetime|value)="[^"]*"/g, '')
        .replace(/<pre[\s\S]*?<\/pre>/g, '')
        // a body shown readably (kit/json-view.ts) is data, like a <pre>
        .replace(/<figure class="json"[\s\S]*?<\/figure>/g, '')
        .replace(/<textarea[\s\S]*?<\/textarea>/g, '')
      expect(shown.match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}[^<"]*/g) ?? [], path).toEqual([])
      for (const m of res.body.matchAll(
        /<time class="ago" datetime="([^"]+)" title="([^"]+)">([^<]+)<span class="visually-hidden"> \(([^)]+)\)<\/span><\/time>/g,
      )) {
        times += 1
        const [, iso, title, words, hidden] = m
        expect(title).toBe(`${new Date(iso!).toISOString().slice(0, 19).replace('T', ' ')} UTC`)
        expect(hidden).toBe(title)
        expect(words).toMatch(/^(just now|\d+ (min|h|days?) ago|in \d+ (min|h|days?))$/)
      }
    }
    // the delivery's attempt, its creation, the audit's entries at least
    expect(times).toBeGreaterThan(3)
  })
})

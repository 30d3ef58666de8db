import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { drainDueTasks, startReceiver } from '../outbound/harness.ts'
import { sendTestEvent } from '@lsv/shared/domain/webhooks/test-event.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal } from './reveal-support.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'

/**
 * The portal's one time format (docs/portal.md, "Times"): every instant a screen shows is a
 * `<time>` with the ISO instant in `datetime`, relative words from the server's clock, and the
 * exact UTC text in the title and as visually hidden text. No raw timestamp anywhere else: not
 * ISO (`2026-11-30T01:31:36.399Z`) in a sentence, nor the exact text (`2026-11-30 01:31:36`)
 * outside a `<time>`. The pages are those of a populated tenant: a delivery, a rotated API key
 * (its audit entry's `previous_until`), a contact pushed before its mapping existed (the
 * contact page's "Missing data, and why" sentence) and the contacts list.
 */
describe('portal: one time format', () => {
  let fixture: IngestFixture
  let cookie: string
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let paths: string[]
  let contactPath: string

  beforeAll(async () => {
    fixture = await createIngestFixture()
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    receiver = await startReceiver(() => ({ status: 500, body: 'down' }))
    const answer = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: `${receiver.url}?t=1`, payload_version: '2' })
    const revealed = await followReveal(fixture.h.portal, answer, cookie)
    const integrationId = /href="\/portal\/webhooks\/([^"#?/]+)"/.exec(revealed.body)![1]!
    const delivery = await sendTestEvent(fixture.h.deps, fixture.t.account.id, integrationId)
    await drainDueTasks(fixture.h.deps)

    const { t } = fixture
    // an API key rotated with a grace: the audit entry's detail `previous_until` is an instant
    const rotated = await formPost(fixture.h.portal, `/portal/connections/${t.apiConnectionId}/keys/${t.keyId}/rotate`, cookie, { grace_seconds: '60' })
    expect(rotated.statusCode).toBe(303)
    // a contact pushed with `shoe_size` before the mapping shoe_size → custom_fields.shoe_size was saved
    const field = await fixture.h.portal.inject({
      method: 'POST',
      url: `${ADMIN}/${t.account.id}/custom-fields`,
      headers: OPERATOR,
      payload: { key: 'shoe_size', label: 'Shoe size', type: 'text' },
    })
    expect(field.statusCode).toBe(201)
    const [outcome] = await fixture.h.deps.contacts.upsertBatch(
      t.account.id,
      [
        {
          source: t.api.source,
          external_id: 'times-1',
          writer: 'manual',
          at: new Date(Date.now() - 120_000).toISOString(),
          origin: 'test:0',
          patch: { identity: { first_name: 'Tim' }, business_email: 'tim@example.com' },
        },
      ],
      mergeContact,
    )
    const mapped = await fixture.h.portal.inject({
      method: 'PATCH',
      url: `${ADMIN}/${t.account.id}/connections/${t.apiConnectionId}`,
      headers: OPERATOR,
      payload: {
        field_mappings: [
          { from: 'external_id', to: 'external_id' },
          { from: 'email', to: 'email' },
          { from: 'shoe_size', to: 'custom_fields.shoe_size' },
        ],
      },
    })
    expect(mapped.statusCode, mapped.body).toBe(200)
    contactPath = `/contacts/${outcome!.contactId}`
    paths = [
      '/portal/',
      '/portal/webhooks',
      `/portal/webhooks/${integrationId}`,
      `/portal/webhooks/${integrationId}/deliveries/${delivery.id}`,
      '/portal/audit',
      '/portal/activity',
      '/portal/settings',
      '/portal/connections',
      '/portal/contacts',
      contactPath,
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

  it('shows no raw timestamp (ISO, or the exact text outside its <time>), form values and quoted bodies aside; its times read relative, with the exact UTC text kept', async () => {
    let times = 0
    const raw: string[] = []
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
      // ISO (with T) anywhere else; the exact text (with a space, to the second) outside the <time>
      // that carries it. A day's start written as a date ("since 2026-11-29 00:00 UTC") is a day, not an instant.
      for (const m of shown.matchAll(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}[^<"]*/g)) raw.push(`${path}: ${m[0]}`)
      const outsideTimes = shown.replace(/<time class="ago"[^>]*>[\s\S]*?<\/time>/g, '')
      for (const m of outsideTimes.matchAll(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[^<"]*/g)) raw.push(`${path}: ${m[0]}`)
      for (const m of res.body.matchAll(
        /<time class="ago" datetime="([^"]+)" title="([^"]+)">([^<]+)<span class="visually-hidden"> \(([^)]+)\)<\/span><\/time>/g,
      )) {
        times += 1
        const [, iso, title, words, hidden] = m
        expect(title).toBe(`${new Date(iso!).toISOString().slice(0, 19).replace('T', ' ')} UTC`)
        expect(hidden).toBe(title)
        expect(words).toMatch(/^(just now|\d+ (min|h|days?) ago|in \d+ (s|min|h|days?))$/)
      }
    }
    expect(raw).toEqual([])
    // the delivery's attempt, its creation, the audit's entries at least
    expect(times).toBeGreaterThan(3)
  })
})

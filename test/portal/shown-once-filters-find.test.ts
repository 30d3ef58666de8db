import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { signIn } from './support.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal, secretIn } from './reveal-support.ts'

/**
 * Three defects a tester found in Chromium (docs/portal.md): the shown-once page of a tracked link
 * advised rotating it; an edited delivery-log filter (and any edited query of a page) answered
 * schema text with no way back; Find with an email and a source/external id at once used the email
 * and dropped the rest unsaid.
 */
describe('portal: shown-once advice, edited addresses, one lookup at a time', () => {
  let fixture: IngestFixture
  let cookie: string
  let adaId: string
  let integrationId: string

  beforeAll(async () => {
    fixture = await createIngestFixture()
    const at = new Date().toISOString()
    const outcomes = await fixture.h.deps.contacts.upsertBatch(
      fixture.t.account.id,
      [
        {
          source: 'demo-api',
          external_id: 'ada-1',
          writer: 'form',
          at,
          origin: 'test:0',
          patch: { identity: { first_name: 'Ada' }, business_email: 'ada@example.com' },
        },
        {
          source: 'demo-api',
          external_id: 'bob-2',
          writer: 'form',
          at,
          origin: 'test:1',
          patch: { identity: { first_name: 'Bob' }, business_email: 'bob@example.com' },
        },
      ],
      mergeContact,
    )
    adaId = outcomes[0]!.contactId
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    const added = await formPost(fixture.h.portal, '/portal/webhooks', cookie, { url: 'https://hooks.example.com/filters', payload_version: '2' })
    await followReveal(fixture.h.portal, added, cookie)
    integrationId = (await fixture.h.deps.tenants.listIntegrations(fixture.t.account.id)).find((i) => i.url === 'https://hooks.example.com/filters')!.id
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('a tracked link seen again: shown once, make a new one from the contact page (linked), not "rotate"', async () => {
    const minted = await formPost(fixture.h.portal, `/contacts/${adaId}/links`, cookie, { destination_url: 'https://example.com/pricing', type: 'opaque' })
    const shown = await followReveal(fixture.h.portal, minted, cookie)
    const link = secretIn(shown.body)
    // reloaded, or Back then Forward: the same answer every time
    for (let i = 0; i < 2; i++) {
      const again = await page(fixture.h.portal, shown.location, cookie)
      expect(again.statusCode).toBe(410)
      expect(again.body).not.toContain(link)
      expect(again.body).not.toContain('rotate')
      expect(again.body).toContain('This tracked link was shown once; if you lost it, make a new link from the contact')
      expect(again.body).toContain(`<a href="/contacts/${adaId}">Back to the contact</a>`)
    }
    // another session of the account learns nothing about it: the generic notice
    const other = await page(fixture.h.portal, shown.location, await signIn(fixture.h.portal, fixture.t.account.id))
    expect(other.statusCode).toBe(410)
    expect(other.body).not.toContain(adaId)
  })

  it('a secret seen again keeps the rotate advice, with the way back to where it was made', async () => {
    const rotated = await formPost(fixture.h.portal, `/portal/webhooks/${integrationId}/secret/reveal`, cookie)
    const shown = await followReveal(fixture.h.portal, rotated, cookie)
    const again = await page(fixture.h.portal, shown.location, cookie)
    expect(again.statusCode).toBe(410)
    expect(again.body).toContain('This secret was shown once; rotate again if you lost it.')
    expect(again.body).toContain(`href="/portal/webhooks/${integrationId}`)
  })

  it('an edited log filter answers on the webhook page, in words, the log shown without it', async () => {
    for (const [query, words] of [
      ['code=999', 'The HTTP status “999” is not one the log can be filtered by'],
      ['from=yesterday', 'The From time “yesterday” is not a date and time'],
      ['to=2026-13-45T10:00', 'The Before time “2026-13-45T10:00” is not a date and time'],
    ] as const) {
      const res = await page(fixture.h.portal, `/portal/webhooks/${integrationId}?${query}&status=failed`, cookie)
      expect(res.statusCode, query).toBe(400)
      expect(res.body, query).toContain(words)
      expect(res.body, query).toContain('The log below is shown without that filter.')
      expect(res.body, query).not.toMatch(/must match|querystring|Not understood/)
      // the webhook's own page: its filter form, the other filters kept
      expect(res.body, query).toContain('aria-label="Filter the delivery log"')
      expect(res.body, query).toContain('<option value="failed" selected>')
    }
    const two = await page(fixture.h.portal, `/portal/webhooks/${integrationId}?code=999&from=yesterday`, cookie)
    expect(two.body).toContain('shown without those filters')
  })

  it('any other edited query of a page: a page in words with the way back, no schema text', async () => {
    for (const [url, back] of [
      [`/portal/webhooks/${integrationId}?status=bogus`, `/portal/webhooks/${integrationId}`],
      [`/portal/webhooks/${integrationId}?code=${'9'.repeat(65)}`, `/portal/webhooks/${integrationId}`],
      [`/portal/contacts?email=${'a'.repeat(321)}`, '/portal/contacts'],
      [`/portal/webhooks/${integrationId}/recover?since=yesterday`, '/portal/webhooks'],
    ] as const) {
      const res = await page(fixture.h.portal, url, cookie)
      expect(res.statusCode, url).toBe(400)
      expect(res.body, url).toContain('address was edited or cut short')
      expect(res.body, url).toContain(`<a href="${back}">`)
      expect(res.body, url).not.toMatch(/must match|must be|querystring|Not understood/)
    }
  })

  it('Find with an email and a source/external id at once is refused in words, keeping what was typed', async () => {
    const res = await page(fixture.h.portal, '/portal/contacts?email=ada%40example.com&source=demo-api&external_id=bob-2', cookie)
    expect(res.statusCode).toBe(400)
    expect(res.headers.location).toBeUndefined()
    expect(res.body).toContain('Find by the business email or by the source and external id, not both')
    expect(res.body).toContain('value="ada@example.com"')
    expect(res.body).toContain('value="demo-api"')
    expect(res.body).toContain('value="bob-2"')
    // one of them alone still finds
    expect((await page(fixture.h.portal, '/portal/contacts?email=ada%40example.com', cookie)).headers.location).toBe(`/contacts/${adaId}`)
  })
})

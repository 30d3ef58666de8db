import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { readContact } from '@lsv/shared/domain/contacts/read.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import { hashOpaqueToken } from '@lsv/shared/domain/links/opaque.ts'
import { signIn } from './support.ts'
import { ADMIN, OPERATOR } from '../management/harness.ts'
import { formPost, page } from './screens-support.ts'
import { followReveal, secretIn } from './reveal-support.ts'

/**
 * The Contacts screen through app.inject: the page at exactly the read contract's `links.portal`
 * URL (signed in: the page; signed out: the sign-in page; another account: 404), the list and the
 * lookups, and minting a tracked link from the page (contract 4.2's function, same-origin only).
 */
describe('portal screen: contacts', () => {
  let fixture: IngestFixture
  let cookie: string
  let otherCookie: string
  let contactId: string
  let portalPath: string

  beforeAll(async () => {
    fixture = await createIngestFixture()
    const { deps } = fixture.h
    for (const [key, type] of [
      ['plan', 'text'],
      ['score', 'number'],
    ]) {
      const res = await fixture.h.portal.inject({
        method: 'POST',
        url: `${ADMIN}/${fixture.t.account.id}/custom-fields`,
        headers: OPERATOR,
        payload: { key, label: key, type },
      })
      expect(res.statusCode).toBe(201)
    }
    const [outcome] = await deps.contacts.upsertBatch(
      fixture.t.account.id,
      [
        {
          source: 'crm',
          external_id: 'c-42',
          writer: 'form',
          at: new Date().toISOString(),
          origin: 'test:0',
          patch: {
            identity: { first_name: 'Grace', last_name: 'Hopper' },
            business_email: 'grace@example.com',
            custom_fields: { plan: { value: 'gold', source: 'inbound_mapping', enriched_at: null } },
          },
        },
      ],
      mergeContact,
    )
    contactId = outcome!.contactId
    const contact = await readContact(deps, fixture.t.account.id, contactId, undefined)
    portalPath = new URL(contact.links.portal).pathname
    cookie = await signIn(fixture.h.portal, fixture.t.account.id)
    otherCookie = await signIn(fixture.h.portal, fixture.other.account.id)
  })
  afterAll(async () => {
    await fixture?.close()
  })

  it('links.portal opens the contact page for a session of its account', async () => {
    expect(portalPath).toBe(`/contacts/${contactId}`)
    const res = await page(fixture.h.portal, portalPath, cookie)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Grace')
    expect(res.body).toContain('grace@example.com')
    // custom fields with their provenance; `missing` with each reason in words
    expect(res.body).toContain('gold')
    expect(res.body).toContain('through a field mapping')
    expect(res.body).toMatch(/custom_fields\.score<\/code><\/td><td[^>]*><code>unmapped<\/code>: Unmapped: no connection maps/)
    expect(res.body).toContain('not_enriched</code>: Not enriched yet')
    expect(res.body).toContain('First seen')
  })

  it("without a session it sends to the sign-in page; another account's session gets 404", async () => {
    const anon = await fixture.h.portal.inject({ method: 'GET', url: portalPath })
    expect(anon.statusCode).toBe(303)
    expect(anon.headers.location).toBe('/portal/')
    const other = await page(fixture.h.portal, portalPath, otherCookie)
    expect(other.statusCode).toBe(404)
    expect(other.body).not.toContain('Grace')
    expect((await page(fixture.h.portal, '/contacts/00000000-0000-8000-8000-000000000000', cookie)).statusCode).toBe(404)
    // an id that is not a UUID names no page either: the 404 page, not the form's "not understood"
    const garbled = await page(fixture.h.portal, '/contacts/not-a-contact-id', cookie)
    expect(garbled.statusCode).toBe(404)
    expect(garbled.body).not.toContain('Not understood')
    // the id in upper case is the same contact (UUIDs in either case, RFC 9562)
    const upper = await page(fixture.h.portal, `/contacts/${contactId.toUpperCase()}`, cookie)
    expect(upper.statusCode).toBe(200)
    expect(upper.body).toContain('Grace')
  })

  it('lists with keyset paging and finds by email or by (source, external_id)', async () => {
    const list = await page(fixture.h.portal, '/portal/contacts', cookie)
    expect(list.statusCode).toBe(200)
    expect(list.body).toContain(`/contacts/${contactId}`)
    expect((await page(fixture.h.portal, '/portal/contacts', otherCookie)).body).not.toContain(contactId)
    const byEmail = await page(fixture.h.portal, '/portal/contacts?email=GRACE%40example.com', cookie)
    expect(byEmail.statusCode).toBe(303)
    expect(byEmail.headers.location).toBe(`/contacts/${contactId}`)
    const byAnchor = await page(fixture.h.portal, '/portal/contacts?source=crm&external_id=c-42', cookie)
    expect(byAnchor.headers.location).toBe(`/contacts/${contactId}`)
    // another account looking up the same email finds nothing
    const foreign = await page(fixture.h.portal, '/portal/contacts?email=grace%40example.com', otherCookie)
    expect(foreign.statusCode).toBe(200)
    expect(foreign.body).toContain('No contact with the business email')
    expect((await page(fixture.h.portal, '/portal/contacts?cursor=%21%21', cookie)).statusCode).toBe(400)
  })

  it('mints a tracked link from the page (same-origin only), as contract 4.2 does, and audits it', async () => {
    const res = await formPost(fixture.h.portal, `${portalPath}/links`, cookie, { destination_url: 'https://example.com/pricing', type: 'opaque' })
    const link = secretIn((await followReveal(fixture.h.portal, res, cookie)).body)
    const url = new URL(link)
    expect(`${url.origin}${url.pathname}`).toBe('https://example.com/pricing')
    const token = [...url.searchParams.values()].at(-1)!
    expect(await fixture.h.deps.linkTokens.get(hashOpaqueToken(token))).toMatchObject({ account_id: fixture.t.account.id, contact_id: contactId })
    expect((await listAudit(fixture.h.deps, fixture.t.account.id, { limit: 5 })).data[0]).toMatchObject({
      action: 'link.minted',
      target: { contact_id: contactId },
    })

    const refused = await formPost(fixture.h.portal, `${portalPath}/links`, cookie, { destination_url: 'https://not-authorized.test/' })
    expect(refused.statusCode).toBe(400)
    expect(refused.body).not.toContain('minted-link')
    const crossSite = await formPost(fixture.h.portal, `${portalPath}/links`, cookie, { destination_url: 'https://example.com/' }, 'https://evil.example')
    expect(crossSite.statusCode).toBe(403)
    expect((await formPost(fixture.h.portal, `${portalPath}/links`, otherCookie, { destination_url: 'https://example.com/' })).statusCode).toBe(404)
  })

  it('pages through the whole list with "Next page": 25, then the rest, none twice, none left out', async () => {
    // 30 more contacts (31 with Grace); another account's contacts never show up
    const inputs = (accountTag: string) =>
      Array.from({ length: 30 }, (_, i) => ({
        source: 'crm',
        external_id: `${accountTag}-${i}`,
        writer: 'form' as const,
        at: new Date().toISOString(),
        origin: `test:${i}`,
        patch: { identity: { first_name: `Page${i}`, last_name: accountTag }, business_email: `page${i}@example.com` },
      }))
    const mine = await fixture.h.deps.contacts.upsertBatch(fixture.t.account.id, inputs('mine'), mergeContact)
    await fixture.h.deps.contacts.upsertBatch(fixture.other.account.id, inputs('theirs'), mergeContact)
    const expected = [contactId, ...mine.map((o) => o!.contactId)].sort()

    const pages: string[][] = []
    for (let url: string | null = '/portal/contacts'; url !== null; ) {
      const res = await page(fixture.h.portal, url, cookie)
      expect(res.statusCode).toBe(200)
      const list = res.body.slice(res.body.indexOf('id="list-h"'))
      pages.push([...list.matchAll(/<td[^>]*><a href="\/contacts\/([^"]+)">/g)].map((m) => decodeURIComponent(m[1]!)))
      url = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(list)?.[1]?.replace(/&amp;/g, '&') ?? null
      // a later page links back to the first
      expect(list.includes('>First page</a>')).toBe(pages.length > 1)
      expect(pages.length).toBeLessThan(5)
    }
    expect(pages.map((p) => p.length)).toEqual([25, 6])
    // ordered by contact id, as the read contract's list is
    expect(pages.flat()).toEqual(expected)
    expect(new Set(pages.flat()).size).toBe(31)
  })
})

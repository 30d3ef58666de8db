import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { createIngestFixture, body, expectError, type Harness, type IngestFixture, record } from '../ingest/support/harness.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { seedContact } from '../links/fixtures.ts'
import { handleBatchMessage } from '../../services/upsert-worker/src/handle-batch.ts'
import { sameOrigin, signIn } from './support.ts'

const PORTAL_ORIGIN = 'http://localhost:8081'

/**
 * The session as a credential (management-api.md, "Portal access", rules 4-6): contract 4.2
 * `POST /api/contacts/links` and 4.6 `POST /api/contacts` accept a same-origin session in place of
 * a key; a present key always decides; the edge host never accepts a session.
 */
describe('the portal session as a credential', () => {
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 12, 0, 0))
  let fixture: IngestFixture
  let h: Harness
  let cookie: string
  let otherCookie: string
  let contact: string
  let foreignContact: string

  const mint = (headers: Record<string, string>, payload: object = { destinationUrl: 'https://example.com/pricing', contactId: contact }) =>
    h.portal.inject({ method: 'POST', url: '/api/contacts/links', headers: { 'content-type': 'application/json', ...headers }, payload })
  const push = (headers: Record<string, string>, payload = body([record(1)])) =>
    h.portal.inject({ method: 'POST', url: '/api/contacts', headers: { 'content-type': 'application/json', ...headers }, payload })

  beforeAll(async () => {
    fixture = await createIngestFixture({ clock })
    h = fixture.h
    cookie = await signIn(h.portal, fixture.t.account.id)
    otherCookie = await signIn(h.portal, fixture.other.account.id)
    contact = await seedContact(h.deps, fixture.t.account.id, 'crm', 'c-1')
    foreignContact = await seedContact(h.deps, fixture.other.account.id, 'crm', 'c-1')
  })
  afterAll(async () => {
    await fixture?.close()
  })

  describe('4.2 POST /api/contacts/links', () => {
    it('a same-origin session mints for its account (Origin, or Sec-Fetch-Site: same-origin)', async () => {
      for (const headers of [
        { cookie, origin: PORTAL_ORIGIN },
        { cookie, 'sec-fetch-site': 'same-origin' },
      ] as Array<Record<string, string>>) {
        const res = await mint(headers)
        expect(res.statusCode).toBe(200)
        expect(res.json()).toMatchObject({ ok: true, contactId: contact, type: 'opaque' })
      }
      // by (source, externalId) too, and a key is not needed for contacts:links:write
      const res = await mint(sameOrigin(cookie), { destinationUrl: 'https://example.com/', source: 'crm', externalId: 'c-1' })
      expect(res.json().contactId).toBe(contact)
    })

    it('a session that is not same-origin does not count: 401 as for no credential', async () => {
      for (const headers of [
        { cookie },
        { cookie, origin: 'https://evil.example' },
        { cookie, origin: 'http://localhost:8082' },
        { cookie, origin: 'https://localhost:8081' },
        { cookie, origin: 'null' },
        { cookie, 'sec-fetch-site': 'same-site' },
        { cookie, 'sec-fetch-site': 'cross-site' },
        { cookie, 'sec-fetch-site': 'none' },
      ] as Array<Record<string, string>>)
        expectError(await mint(headers), 401, 'unauthorized')
      expectError(await mint({ origin: PORTAL_ORIGIN }), 401, 'unauthorized')
      expectError(await mint({ origin: PORTAL_ORIGIN, cookie: 'lsv_portal=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 401, 'unauthorized')
    })

    it("sees only its own account: another account's contact answers as if it did not exist (404)", async () => {
      expectError(await mint(sameOrigin(cookie), { destinationUrl: 'https://example.com/', contactId: foreignContact }), 404, 'contact not found')
      // and the other account's session sees its own (and not this one's)
      const own = await mint(sameOrigin(otherCookie), { destinationUrl: 'https://example.com/', contactId: foreignContact })
      expect(own.statusCode).toBe(200)
      expect(own.json().contactId).toBe(foreignContact)
      expectError(await mint(sameOrigin(otherCookie)), 404, 'contact not found')
    })

    it('a present key always decides: a wrong, blank or malformed key with a valid session is 401; a valid key acts as its own account', async () => {
      for (const key of [
        { authorization: 'Bearer lsk_wrongwrongwrongwrongwrongwrongwrongwrongwro' },
        { authorization: '' },
        { authorization: 'Basic dXNlcjpwYXNz' },
        { 'x-api-key': '' },
        { 'x-api-key': 'nope' },
      ] as Array<Record<string, string>>)
        expectError(await mint({ ...sameOrigin(cookie), ...key }), 401, 'unauthorized')
      // the other tenant's key (contacts:write only) decides: 403, not the session's 200
      expectError(await mint({ ...sameOrigin(cookie), authorization: `Bearer ${fixture.other.key}` }), 403, 'forbidden')
    })
  })

  describe('4.6 POST /api/contacts', () => {
    it("a same-origin session pushes through its account's api connection (202, queued)", async () => {
      const before = h.q.batches().length
      const res = await push(sameOrigin(cookie))
      expect(res.statusCode).toBe(202)
      expect(res.json()).toEqual({ ok: true, accepted: 1, queued: true })
      const message = h.q.batches()[before]!
      expect(message.attributes).toMatchObject({ account_id: fixture.t.account.id, connection_id: fixture.t.api.id, source: fixture.t.api.source })
      expect(await handleBatchMessage(h.deps, message)).toBe('ack')
      expect(await h.deps.contacts.getByAnchor(fixture.t.account.id, fixture.t.api.source, 'ext-1')).not.toBeNull()
    })

    it('not same-origin, or with a present key: the session does not count', async () => {
      expectError(await push({ cookie }), 401, 'unauthorized')
      expectError(await push({ cookie, origin: 'https://evil.example' }), 401, 'unauthorized')
      expectError(await push({ cookie, 'sec-fetch-site': 'cross-site' }), 401, 'unauthorized')
      expectError(await push({ ...sameOrigin(cookie), authorization: 'Bearer lsk_wrongwrongwrongwrongwrongwrongwrongwrongwro' }), 401, 'unauthorized')
      expectError(await push({ ...sameOrigin(cookie), 'x-api-key': '' }), 401, 'unauthorized')
      // a valid key decides: it pushes through its own connection
      const before = h.q.batches().length
      expect((await push({ ...sameOrigin(cookie), authorization: `Bearer ${fixture.other.key}` })).statusCode).toBe(202)
      expect(h.q.batches()[before]!.attributes.connection_id).toBe(fixture.other.api.id)
    })

    it('an account without an active api connection: 403 for its session', async () => {
      const t = await createTestTenant(h.deps)
      try {
        const own = await signIn(h.portal, t.account.id)
        expect((await push(sameOrigin(own))).statusCode).toBe(202)
        await h.deps.tenants.updateConnection(t.api.id, { active: false })
        expectError(await push(sameOrigin(own)), 403, 'forbidden')
      } finally {
        await t.cleanup()
      }
    })
  })

  it('the edge host never accepts a session: a cookie (same-origin or not) on the edge push is ignored, 401 without a key', async () => {
    for (const headers of [sameOrigin(cookie), { cookie, 'sec-fetch-site': 'same-origin' }, sameOrigin(cookie, `http://${fixture.t.host}`)]) {
      const res = await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: { ...headers, host: fixture.t.host }, payload: body([record(2)]) })
      expectError(res, 401, 'unauthorized')
    }
    // control: the same request with the key is accepted
    const res = await h.edge.inject({ method: 'POST', url: '/v1/contacts', headers: { ...fixture.t.keyHeaders(), cookie }, payload: body([record(2)]) })
    expect(res.statusCode).toBe(202)
  })
})

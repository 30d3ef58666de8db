import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { randomSuffix } from '../helpers/embedded.ts'
import { OPERATOR } from '../management/harness.ts'
import { seedContact } from '../links/fixtures.ts'

/**
 * UUIDs are read in either case (RFC 9562) and answered lower case, as they are stored
 * (shared/src/http/uuid-case.ts, applied by route validation). Over real HTTP against a listening
 * portal: minting by an upper-case `contactId`, the read API's contact, and the management API's
 * account-scoped paths with an upper-case account id. Ids that are not UUIDs (`src_…`/`int_…`
 * ids, location ids, external ids) keep their case.
 *
 * Mutation: the validator compiler without the lower-casing (route-schema-compilers.ts) answers
 * 404 to every upper-case id below; lower-casing every path or body string answers 404 to the
 * mixed-case location id, connection id and external id.
 */
describe('UUIDs in either case', () => {
  let fixture: IngestFixture
  let t: StoredTenant
  let base: string
  let contactId: string
  let mixedContactId: string
  const LOCATION = 'Loc-MiXed-7'

  beforeAll(async () => {
    fixture = await createIngestFixture()
    const { h } = fixture
    t = await createTestTenant(h.deps, {
      authorizedDomains: ['example.com'],
      api: { key: { scopes: ['contacts:read', 'contacts:links:write'] } },
      partner: { locationId: LOCATION },
      integration: { url: 'https://hooks.example.com/in' },
    })
    contactId = await seedContact(h.deps, t.accountId, 'crm', `ext-${randomSuffix(6)}`)
    mixedContactId = await seedContact(h.deps, t.accountId, 'crm', 'Ext-MiXed')
    await h.portal.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(h.portal.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await t?.cleanup()
    await fixture?.close()
  })

  async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> }
  }
  const key = () => ({ authorization: `Bearer ${t.key}` })
  const mint = (body: Record<string, unknown>) => call('POST', '/api/contacts/links', key(), { destinationUrl: 'https://example.com/pricing', ...body })

  it('the ids are stored lower case (the premise)', () => {
    expect(contactId).toBe(contactId.toLowerCase())
    expect(t.accountId).toBe(t.accountId.toLowerCase())
    expect(contactId).toMatch(/[a-f]/)
    expect(t.accountId).toMatch(/[a-f]/)
  })

  it('POST /api/contacts/links mints for an upper-case contactId and answers it lower case', async () => {
    const lower = await mint({ contactId })
    expect(lower.status, JSON.stringify(lower.body)).toBe(200)
    const upper = await mint({ contactId: contactId.toUpperCase() })
    expect(upper.status, JSON.stringify(upper.body)).toBe(200)
    expect(upper.body.contactId).toBe(contactId)
    // mixed case too
    const mixed = contactId.replace(/[a-f]/, (c) => c.toUpperCase())
    expect((await mint({ contactId: mixed })).body.contactId).toBe(contactId)
    // and the URN form `format: uuid` accepts (RFC 9562 section 4): the same contact (lib/uuid.ts)
    const urn = await mint({ contactId: `urn:uuid:${contactId.toUpperCase()}` })
    expect(urn.status, JSON.stringify(urn.body)).toBe(200)
    expect(urn.body.contactId).toBe(contactId)
  })

  it('an external id keeps its case: minting by (source, externalId) matches it exactly', async () => {
    const exact = await mint({ source: 'crm', externalId: 'Ext-MiXed' })
    expect(exact.status, JSON.stringify(exact.body)).toBe(200)
    expect(exact.body.contactId).toBe(mixedContactId)
    expect(await mint({ source: 'crm', externalId: 'ext-mixed' })).toEqual({ status: 404, body: { ok: false, error: 'contact not found' } })
  })

  it('GET /api/v1/contacts/{id} reads the contact for an upper-case id, answering its id lower case', async () => {
    const res = await call('GET', `/api/v1/contacts/${contactId.toUpperCase()}`, key())
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.id).toBe(contactId)
    // still 404 for a UUID that names no contact, in either case
    const unknown = 'AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA'
    expect(await call('GET', `/api/v1/contacts/${unknown}`, key())).toEqual({ status: 404, body: { ok: false, error: 'contact not found' } })
  })

  it('the management API takes an upper-case account id on its account-scoped paths', async () => {
    const account = `/api/v1/admin/accounts/${t.accountId.toUpperCase()}`
    const read = await call('GET', account, OPERATOR)
    expect(read.status, JSON.stringify(read.body)).toBe(200)
    expect(read.body.id).toBe(t.accountId)
    const patched = await call('PATCH', account, OPERATOR, { name: 'Upper Co' })
    expect(patched.status, JSON.stringify(patched.body)).toBe(200)
    expect(patched.body).toMatchObject({ id: t.accountId, name: 'Upper Co' })
    // an id that is not a UUID is refused before any lookup
    expect((await call('GET', '/api/v1/admin/accounts/not-a-uuid', OPERATOR)).status).toBe(400)

    // connections, integrations and deliveries below it; their own ids are not UUIDs and are sent as they are
    for (const path of [
      `${account}/connections`,
      `${account}/connections/${t.apiConnectionId}`,
      `${account}/authorized-domains`,
      `${account}/integrations/${t.integrationId}`,
      `${account}/integrations/${t.integrationId}/deliveries`,
      `/api/v1/admin/accounts?after=${t.accountId.toUpperCase()}&limit=1`,
    ]) {
      const res = await call('GET', path, OPERATOR)
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200)
    }
    const connection = await call('GET', `${account}/connections/${t.apiConnectionId}`, OPERATOR)
    expect(connection.body.id).toBe(t.apiConnectionId)
  })

  it('ids that are not UUIDs keep their case: a mixed-case location id matches only as sent', async () => {
    const locations = `/api/v1/admin/accounts/${t.accountId.toUpperCase()}/connections/${t.partnerConnectionId}/locations`
    const lowered = await call('POST', `${locations}/${LOCATION.toLowerCase()}/token/rotate`, OPERATOR, {})
    expect(lowered.status, JSON.stringify(lowered.body)).toBe(404)
    const exact = await call('POST', `${locations}/${LOCATION}/token/rotate`, OPERATOR, {})
    expect(exact.status, JSON.stringify(exact.body)).toBe(201)
  })
})

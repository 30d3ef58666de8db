/**
 * A repeated `include` on the read API answers 400 `invalid include` (docs/read-api.md,
 * "include"; contract 7.7), as any other value but the allowed tiers does. A repeated query
 * parameter arrives as an array, and the route's schema (a string) refused it first as
 * `invalid payload`. The order of checks stays: the key (401/403) before any parameter, and
 * `limit` out of range is still `invalid payload`. Real requests against a listening portal.
 * Mutation: contacts-read.ts without the `preValidation: includeFirst` hooks -> `invalid payload`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AddressInfo } from 'node:net'
import { createIngestFixture, type IngestFixture } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

describe('read API: a repeated include parameter', () => {
  let fixture: IngestFixture
  let reader: StoredTenant
  let base = ''

  beforeAll(async () => {
    fixture = await createIngestFixture()
    reader = await createTestTenant(fixture.h.deps, { api: { key: { scopes: ['contacts:read'] } } })
    await fixture.h.portal.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(fixture.h.portal.server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await reader?.cleanup()
    await fixture?.close()
  })

  const get = async (path: string, key?: string) => {
    const res = await fetch(`${base}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} })
    return { status: res.status, body: (await res.json()) as unknown }
  }
  const invalidInclude = { status: 400, body: { ok: false, error: 'invalid include' } }
  const id = '00000000-0000-4000-8000-000000000000'
  const repeated = [
    'include=contact_handles&include=custom_fields',
    'include=contact_handles&include=sensitive_traits',
    'include=contact_handles&include=contact_handles',
    'include=custom_fields&include=nope',
  ]

  it('answers 400 invalid include on the list and on one contact, whatever the repeated values', async () => {
    for (const query of repeated) {
      expect(await get(`/api/v1/contacts?${query}`, reader.key), query).toEqual(invalidInclude)
      expect(await get(`/api/v1/contacts/${id}?${query}`, reader.key), query).toEqual(invalidInclude)
      // with other parameters beside it too
      expect(await get(`/api/v1/contacts?limit=5&${query}`, reader.key), query).toEqual(invalidInclude)
    }
    // the control: the same tiers as one comma list are read
    expect((await get('/api/v1/contacts?include=contact_handles,sensitive_traits', reader.key)).status).toBe(200)
    expect(await get(`/api/v1/contacts/${id}?include=contact_handles,sensitive_traits`, reader.key)).toEqual({
      status: 404,
      body: { ok: false, error: 'contact not found' },
    })
  })

  it('the key is still checked first (401, 403), and limit out of range is still invalid payload', async () => {
    const query = repeated[0]!
    expect(await get(`/api/v1/contacts?${query}`)).toEqual({ status: 401, body: { ok: false, error: 'unauthorized' } })
    expect(await get(`/api/v1/contacts/${id}?${query}`, `lsk_${'w'.repeat(43)}`)).toEqual({ status: 401, body: { ok: false, error: 'unauthorized' } })
    // the fixture's own key has contacts:write only
    expect(await get(`/api/v1/contacts?${query}`, fixture.t.key)).toEqual({ status: 403, body: { ok: false, error: 'forbidden' } })
    expect(await get('/api/v1/contacts?limit=1000', reader.key)).toEqual({ status: 400, body: { ok: false, error: 'invalid payload' } })
    expect(await get('/api/v1/contacts?include=contact_handles&limit=1000', reader.key)).toEqual({
      status: 400,
      body: { ok: false, error: 'invalid payload' },
    })
  })
})

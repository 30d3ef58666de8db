import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { READ_WINDOWS } from '@lsv/shared/domain/contacts/read-quota.ts'
import { createIngestFixture, expectError, type Harness, type IngestFixture } from '../ingest/support/harness.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'

/**
 * The read API (docs/read-api.md): the key is checked before the parameters, and the API is
 * rate-limited per key (429 with Retry-After), counting only authenticated requests.
 */
describe('read API: credentials first, rate limit', () => {
  let fixture: IngestFixture
  let h: Harness
  let reader: StoredTenant
  let other: StoredTenant
  // the start of a minute, far from the end of the day: the 60-second window decides
  const clock = new ManualClock(Date.UTC(2026, 8, 4, 9, 0, 0))
  const get = (url: string, headers: Record<string, string> = {}) => h.portal.inject({ method: 'GET', url, headers })
  const key = (t: StoredTenant) => ({ authorization: `Bearer ${t.key}` })

  beforeAll(async () => {
    fixture = await createIngestFixture({ clock })
    h = fixture.h
    reader = await createTestTenant(h.deps, { api: { key: { scopes: ['contacts:read'] } } })
    other = await createTestTenant(h.deps, { api: { key: { scopes: ['contacts:read'] } } })
  })
  afterAll(async () => {
    await reader?.cleanup()
    await other?.cleanup()
    await fixture?.close()
  })

  it('no or a wrong key: 401 whatever the parameters (a 400 would describe them to anyone)', async () => {
    for (const url of [
      '/api/v1/contacts?limit=1000',
      '/api/v1/contacts?include=custom_fields',
      '/api/v1/contacts?cursor=%%%',
      `/api/v1/contacts/${'x'.repeat(500)}`,
      '/api/v1/contacts/some-id?include=nope',
    ]) {
      expectError(await get(url), 401, 'unauthorized')
      expectError(await get(url, { authorization: `Bearer lsk_${'w'.repeat(43)}` }), 401, 'unauthorized')
    }
    // a key without contacts:read is 403 before the parameters too
    expectError(await get('/api/v1/contacts?limit=1000', key(fixture.t)), 403, 'forbidden')
  })

  it('with a valid key the parameters are checked: 400', async () => {
    expectError(await get('/api/v1/contacts?limit=1000', key(reader)), 400, 'invalid payload')
    expectError(await get('/api/v1/contacts?include=custom_fields', key(reader)), 400, 'invalid include')
  })

  it('120 reads per 60 s per key, then 429 with Retry-After 60; other keys and anonymous calls are not counted against it', async () => {
    const minute = READ_WINDOWS.find((w) => w.seconds === 60)!
    clock.set(Date.UTC(2026, 8, 4, 10, 0, 0))
    // anonymous calls first: they must not count (contract 7.4)
    for (let i = 0; i < 30; i++) expect((await get('/api/v1/contacts?limit=1')).statusCode).toBe(401)
    const statuses: number[] = []
    for (let i = 0; i < minute.limit; i++) {
      const url = i % 2 === 0 ? '/api/v1/contacts?limit=1' : '/api/v1/contacts/00000000-0000-4000-8000-000000000000'
      statuses.push((await get(url, key(reader))).statusCode)
    }
    expect(statuses.filter((s) => s === 429)).toEqual([])
    const limited = await get('/api/v1/contacts?limit=1', key(reader))
    expectError(limited, 429, 'rate limited')
    expect(limited.headers['retry-after']).toBe('60')
    expectError(await get('/api/v1/contacts/00000000-0000-4000-8000-000000000000', key(reader)), 429, 'rate limited')
    // another key of another account is not affected
    expect((await get('/api/v1/contacts?limit=1', key(other))).statusCode).toBe(200)
    // the next window admits again
    clock.set(Date.UTC(2026, 8, 4, 10, 1, 0))
    expect((await get('/api/v1/contacts?limit=1', key(reader))).statusCode).toBe(200)
  })
})

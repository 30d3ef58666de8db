import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createTenantLookupCache } from '@lsv/shared/adapters/tenant-lookup-cache.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import type { TenantConfigVersion } from '@lsv/shared/ports/tenant-lookups.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { account, apiKey, connection, integration, location } from './suites/tenant-store.ts'

/**
 * The lookup cache in front of the tenant store (shared/src/adapters/tenant-lookup-cache.ts): what
 * it answers from memory, and what makes it read again. The store is the embedded one, counted;
 * the version is a stand-in the test moves (the adapters' own versions: tenant-config-version.test.ts,
 * and across instances: test/deactivation/revocation-bound.test.ts).
 */

/** a version the test sets; null: not confirmed */
function manualVersion() {
  const state = { value: 1 as number | null }
  const version: TenantConfigVersion = { boundMs: 1000, confirmed: () => state.value }
  return { state, version }
}

/** the store, counting the reads that reach it, with an optional pause before a read answers */
function counted(store: TenantStore) {
  const reads: string[] = []
  const gate = { hold: null as Promise<void> | null }
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (typeof prop !== 'string' || typeof value !== 'function' || !/^(get|list|find)/.test(prop)) return value
      return async (...args: unknown[]) => {
        reads.push(prop)
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        if (gate.hold) await gate.hold
        return result
      }
    },
  })
  return { proxy, reads, gate }
}

describe('tenant lookup cache', () => {
  let dir: ReturnType<typeof tempDataDir>
  let db: EmbeddedDb
  let store: TenantStore
  beforeAll(() => {
    dir = tempDataDir()
    db = openEmbeddedDb(dir.dir)
    store = createEmbeddedTenantStore(db)
  })
  afterAll(async () => {
    await db.close()
    dir.cleanup()
  })

  async function setUp() {
    const a = account()
    await store.createAccount(a)
    const c = connection(a.id, { type: 'api' })
    await store.createConnection(c)
    const k = apiKey(a.id, c.id)
    await store.createApiKey(k)
    const counting = counted(store)
    const v = manualVersion()
    const cache = createTenantLookupCache(counting.proxy, v.version)
    return { a, c, k, ...counting, v, cache }
  }

  it('answers a repeated lookup from memory, with the record the store gave', async () => {
    const { a, k, reads, cache } = await setUp()
    const first = await cache.lookups.getApiKeyByHash(k.hash)
    expect(first).toEqual(k)
    expect(await cache.lookups.getApiKeyByHash(k.hash)).toBe(first)
    expect(await cache.lookups.getAccountByPublicId(a.public_id)).toEqual(await store.getAccount(a.id))
    await cache.lookups.getAccountByPublicId(a.public_id)
    expect(reads).toEqual(['getApiKeyByHash', 'getAccountByPublicId'])
  })

  it('shares records frozen: a caller cannot change what the next one gets', async () => {
    const { k, cache } = await setUp()
    const got = (await cache.lookups.getApiKeyByHash(k.hash))!
    expect(Object.isFrozen(got)).toBe(true)
    expect(Object.isFrozen(got.scopes)).toBe(true)
    expect(() => {
      ;(got as { revoked_at: string | null }).revoked_at = 'x'
    }).toThrow(TypeError)
  })

  it('reads again once the version changes', async () => {
    const { k, reads, v, cache } = await setUp()
    await cache.lookups.getApiKeyByHash(k.hash)
    await store.updateApiKey(k.id, { revoked_at: '2026-01-02T00:00:00.000Z' }) // behind the cache's back
    expect((await cache.lookups.getApiKeyByHash(k.hash))!.revoked_at).toBeNull() // same version: memory
    v.state.value = 2
    expect((await cache.lookups.getApiKeyByHash(k.hash))!.revoked_at).toBe('2026-01-02T00:00:00.000Z')
    expect(reads).toEqual(['getApiKeyByHash', 'getApiKeyByHash'])
  })

  it("a write through the cache's store clears it when the write returns (one instance: at once)", async () => {
    const { c, reads, cache } = await setUp()
    expect((await cache.lookups.getConnection(c.id))!.active).toBe(true)
    await cache.tenants.updateConnection(c.id, { active: false })
    expect((await cache.lookups.getConnection(c.id))!.active).toBe(false)
    expect(reads).toEqual(['getConnection', 'getConnection'])
  })

  it('a failed write clears it too (its outcome is not known)', async () => {
    const { a, reads, cache } = await setUp()
    await cache.lookups.getAccount(a.id)
    await expect(cache.tenants.createAccount({ ...a })).rejects.toThrow() // duplicate id
    await cache.lookups.getAccount(a.id)
    expect(reads).toEqual(['getAccount', 'getAccount'])
  })

  it('does not keep what a read returned when the cache was cleared while it ran', async () => {
    const { c, reads, gate, cache } = await setUp()
    let release!: () => void
    gate.hold = new Promise<void>((r) => {
      release = r
    })
    const slow = cache.lookups.getConnection(c.id) // read the old record, then wait
    await new Promise((r) => setTimeout(r, 10))
    await cache.tenants.updateConnection(c.id, { active: false })
    gate.hold = null
    release()
    expect((await slow)!.active).toBe(true) // its own answer
    expect((await cache.lookups.getConnection(c.id))!.active).toBe(false) // not kept
    expect(reads).toEqual(['getConnection', 'getConnection'])
  })

  it('shares one read among concurrent misses of a key', async () => {
    const { k, reads, cache } = await setUp()
    const all = await Promise.all([1, 2, 3].map(() => cache.lookups.getApiKeyByHash(k.hash)))
    expect(all.every((x) => x === all[0])).toBe(true)
    expect(reads).toEqual(['getApiKeyByHash'])
  })

  it('never keeps an unknown id: each lookup of it reaches the store', async () => {
    const { reads, cache } = await setUp()
    expect(await cache.lookups.getAccount('nobody')).toBeNull()
    expect(await cache.lookups.getAccount('nobody')).toBeNull()
    expect(reads).toEqual(['getAccount', 'getAccount'])
  })

  it("keeps an unknown connection id's miss, apart from the records, until a write or a new version", async () => {
    const { a, reads, v, cache } = await setUp()
    const id = `con-${Math.random().toString(36).slice(2)}`
    expect(await cache.lookups.getConnection(id)).toBeNull()
    expect(await cache.lookups.getConnection(id)).toBeNull()
    // mutation: no miss kept (MISSES_KEPT empty) → two reads
    expect(reads).toEqual(['getConnection'])
    // another instance's write changes the version: read again
    v.state.value = 2
    expect(await cache.lookups.getConnection(id)).toBeNull()
    expect(reads).toEqual(['getConnection', 'getConnection'])
    // this instance's write (the connection is created): found by the next lookup
    // mutation: clear() not clearing the misses → still null
    await cache.tenants.createConnection(connection(a.id, { id }))
    expect((await cache.lookups.getConnection(id))?.id).toBe(id)
    expect(reads).toEqual(['getConnection', 'getConnection', 'getConnection'])
  })

  it('reads through while the version is not confirmed', async () => {
    const { a, reads, v, cache } = await setUp()
    v.state.value = null
    await cache.lookups.getAccount(a.id)
    await cache.lookups.getAccount(a.id)
    expect(reads).toEqual(['getAccount', 'getAccount'])
  })

  // issue 23: a cold instance's burst was one store read per request (1,800 for 600 pushes)
  // Mutation: sharedRead returns load() unshared -> three reads
  it('while unconfirmed, concurrent misses of a key share one read, and nothing is kept after it', async () => {
    const { a, reads, v, cache } = await setUp()
    v.state.value = null
    const all = await Promise.all([1, 2, 3].map(() => cache.lookups.getAccount(a.id)))
    expect(all.every((x) => x?.id === a.id)).toBe(true)
    expect(reads).toEqual(['getAccount'])
    await cache.lookups.getAccount(a.id)
    expect(reads).toEqual(['getAccount', 'getAccount'])
  })

  // Mutation: the bound not checked -> the late caller joins the old read (one read)
  it('while unconfirmed, a read older than the bound is not joined', async () => {
    const { a, reads, gate, proxy } = await setUp()
    const version: TenantConfigVersion = { boundMs: 20, confirmed: () => null }
    const tight = createTenantLookupCache(proxy, version)
    let release!: () => void
    gate.hold = new Promise<void>((r) => {
      release = r
    })
    const first = tight.lookups.getAccount(a.id)
    await new Promise((r) => setTimeout(r, 40))
    gate.hold = null
    const late = tight.lookups.getAccount(a.id)
    release()
    await Promise.all([first, late])
    expect(reads).toEqual(['getAccount', 'getAccount'])
  })

  // Mutation: clear() keeps the unconfirmed reads -> a lookup after this instance's write joins the older read and sees the old record
  it('while unconfirmed, a write through the cache is seen by the next lookup, not hidden by a read under way', async () => {
    const { c, gate, v, cache } = await setUp()
    v.state.value = null
    let release!: () => void
    gate.hold = new Promise<void>((r) => {
      release = r
    })
    const slow = cache.lookups.getConnection(c.id)
    await new Promise((r) => setTimeout(r, 10))
    gate.hold = null
    await cache.tenants.updateConnection(c.id, { active: false })
    const after = cache.lookups.getConnection(c.id)
    release()
    expect((await slow)!.active).toBe(true)
    expect((await after)!.active).toBe(false)
  })

  it('keys lookups by every argument', async () => {
    const { a, reads, cache } = await setUp()
    const i1 = integration(a.id)
    const i2 = integration(a.id)
    await store.createIntegration(i1)
    await store.createIntegration(i2)
    expect((await cache.lookups.getIntegration(i1.id))!.id).toBe(i1.id)
    expect((await cache.lookups.getIntegration(i2.id))!.id).toBe(i2.id)
    expect((await cache.lookups.listIntegrations(a.id)).map((i) => i.id).sort()).toEqual([i1.id, i2.id].sort())
    expect(reads).toEqual(['getIntegration', 'getIntegration', 'listIntegrations'])
  })

  it('keeps the arguments of a lookup apart: (a, bc) is not (ab, c)', async () => {
    // getLocation(accountId, locationId): if the key joined the arguments without a separator,
    // one account's location would answer for another's
    const { v } = await setUp()
    const suffix = Math.random().toString(16).slice(2, 8)
    const a1 = account({ id: `k-${suffix}` })
    const a2 = account({ id: `k-${suffix}b` })
    await store.createAccount(a1)
    await store.createAccount(a2)
    const l1 = location(a1.id, { location_id: 'bc' })
    const l2 = location(a2.id, { location_id: 'c' })
    await store.putLocation(l1)
    await store.putLocation(l2)
    const cache = createTenantLookupCache(store, v.version)
    expect((await cache.lookups.getLocation(a1.id, 'bc'))!.account_id).toBe(a1.id)
    expect((await cache.lookups.getLocation(a2.id, 'c'))!.account_id).toBe(a2.id)
  })

  it('does not keep a failed read: the next lookup reads again', async () => {
    const { a, v } = await setUp()
    let fail = true
    const reads: string[] = []
    const flaky = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'getAccount') return Reflect.get(target, prop, receiver)
        return async (id: string) => {
          reads.push(id)
          if (fail) throw new Error('store unavailable')
          return target.getAccount(id)
        }
      },
    })
    const cache = createTenantLookupCache(flaky, v.version)
    await expect(cache.lookups.getAccount(a.id)).rejects.toThrow('store unavailable')
    fail = false
    expect((await cache.lookups.getAccount(a.id))!.id).toBe(a.id)
    expect(reads).toEqual([a.id, a.id])
  })

  it('holds at most maxEntries records, dropping the oldest', async () => {
    const { a, c, v } = await setUp()
    const counting = counted(store)
    const small = createTenantLookupCache(counting.proxy, v.version, { maxEntries: 2 })
    await small.lookups.getAccount(a.id)
    await small.lookups.getConnection(c.id)
    await small.lookups.listConnections(a.id) // the third: the account goes
    await small.lookups.getConnection(c.id)
    await small.lookups.getAccount(a.id)
    expect(counting.reads).toEqual(['getAccount', 'getConnection', 'listConnections', 'getAccount'])
  })
})

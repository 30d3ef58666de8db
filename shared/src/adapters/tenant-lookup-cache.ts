import { LRUCache } from 'lru-cache'
import type { TenantStore } from '../ports/tenant-store.ts'
import type { TenantConfigVersion, TenantLookups } from '../ports/tenant-lookups.ts'

/** entries kept at most (the least recently used goes first): a few MB of records */
const DEFAULT_MAX_ENTRIES = 20_000

const WRITES = [
  'createAccount',
  'updateAccount',
  'createConnection',
  'updateConnection',
  'createApiKey',
  'updateApiKey',
  'putLocation',
  'updateLocation',
  'createCustomField',
  'createIntegration',
  'updateIntegration',
  'deleteIntegration',
  'deleteAccountData',
] as const satisfies ReadonlyArray<keyof TenantStore>

const LOOKUPS = [
  'getAccount',
  'getAccountByPublicId',
  'getApiKeyByHash',
  'getConnection',
  'listConnections',
  'getLocation',
  'findLocationByTokenHash',
  'listCustomFields',
  'getIntegration',
  'listIntegrations',
] as const satisfies ReadonlyArray<keyof TenantLookups>

/**
 * The lookups whose "not found" is remembered (issue 31, Cloud Armor's exemption of the push
 * paths): `getConnection` is what `POST /v1/contacts/{sourceId}` and `/api/contacts/webhook/{sourceId}`
 * read for any id a caller names, so without this each request with an unknown id cost a store
 * read (two, with the debugger's look at the refused source). Connection ids are random and made
 * by the platform, so an id nobody created cannot be the id of a connection created later except
 * by a guess; the other lookups' keys (public ids, location ids) are chosen by people, and a miss
 * of theirs is not kept.
 */
const MISSES_KEPT = ['getConnection'] as const satisfies ReadonlyArray<(typeof LOOKUPS)[number]>
/** unknown ids remembered at most (least recently used go first): kept apart, so they never push a record out */
const MAX_MISSES = 10_000
/** and for at most this long (besides the version's own bound) */
const MISS_TTL_MS = 30_000

/** every write of the port is listed (a new write method must clear the cache: the compiler says so) */
type Unlisted = Exclude<keyof TenantStore, (typeof WRITES)[number] | 'close' | `get${string}` | `list${string}` | `find${string}`>
const everyWriteListed: [Unlisted] extends [never] ? true : Unlisted = true
void everyWriteListed

export interface TenantLookupCache {
  /** the store, whose writes clear the cache when they return (or fail: their outcome is unknown) */
  tenants: TenantStore
  /** cached reads, valid while `version` stays the same */
  lookups: TenantLookups
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/**
 * A cache of the tenant lookups in front of `store`. Revocation: an answer is served from memory
 * only while `version.confirmed()` returns the version it was cached under, so a change made by
 * any instance is seen within `version.boundMs`; a write through `tenants` (this instance) clears
 * the cache when it returns. A load that was under way while the cache was cleared is not kept
 * (it may have read the old record). Nulls (unknown ids) are kept only for the lookups in
 * MISSES_KEPT, apart from the records (an LRU of MAX_MISSES, each for at most MISS_TTL_MS) and
 * under the same version: a connection created through this instance is found by the next
 * lookup (the write clears them), one created on another instance within `version.boundMs`
 * (every write changes the version). Other nulls are not kept: they cannot fill the cache, and
 * the readiness probe still reaches the store.
 */
export function createTenantLookupCache(store: TenantStore, version: TenantConfigVersion, options: { maxEntries?: number } = {}): TenantLookupCache {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES
  const entries = new LRUCache<string, object>({ max: maxEntries })
  /** keys whose lookup answered null, for the lookups in MISSES_KEPT */
  const misses = new LRUCache<string, true>({ max: MAX_MISSES, ttl: MISS_TTL_MS })
  /** loads under way, shared by concurrent misses of one key */
  const loading = new Map<string, Promise<unknown>>()
  /** reads under way while the version is unconfirmed (see lookup), with when they started */
  const unconfirmed = new Map<string, { startedAt: number; promise: Promise<unknown> }>()
  let cachedVersion: number | null = null
  /** changes whenever the cache is cleared: a load started before keeps its answer to itself */
  let generation = 0

  const clear = () => {
    entries.clear()
    misses.clear()
    loading.clear()
    unconfirmed.clear()
    generation++
  }

  async function lookup<T>(key: string, load: () => Promise<T>, keepMiss: boolean): Promise<T> {
    const current = version.confirmed()
    if (current === null) return sharedRead(key, load)
    if (current !== cachedVersion) {
      clear()
      cachedVersion = current
    }
    const hit = entries.get(key)
    if (hit !== undefined) return hit as T
    if (keepMiss && misses.has(key)) return null as T
    const shared = loading.get(key)
    if (shared) return shared as Promise<T>
    const started = generation
    const promise = load().then(
      (value) => {
        if (generation === started) {
          loading.delete(key)
          if (value !== null && value !== undefined) entries.set(key, deepFreeze(value as object))
          else if (keepMiss) misses.set(key, true)
        }
        return value
      },
      (err: unknown) => {
        if (generation === started) loading.delete(key)
        throw err
      },
    )
    loading.set(key, promise)
    return promise
  }

  /**
   * Unconfirmed (a cold or idle instance): nothing is answered from memory, but concurrent misses
   * of one key share a read that started at most `boundMs` ago. Such a read saw every change
   * committed before it started, the same promise a confirmed version makes. Without it a burst
   * on a cold instance was one store read per request (600 concurrent pushes: 1,800 reads, 22 s
   * for the account lookup on the Firestore emulator, issue 23), and the version's own read,
   * queued behind them, could not confirm within its bound.
   */
  function sharedRead<T>(key: string, load: () => Promise<T>): Promise<T> {
    const now = performance.now()
    const under = unconfirmed.get(key)
    if (under && now - under.startedAt <= version.boundMs) return under.promise as Promise<T>
    const promise: Promise<T> = load().finally(() => {
      if (unconfirmed.get(key)?.promise === promise) unconfirmed.delete(key)
    })
    unconfirmed.set(key, { startedAt: now, promise })
    return promise
  }

  const lookups = {} as Record<string, (...args: string[]) => Promise<unknown>>
  for (const name of LOOKUPS) {
    const read = (store[name] as (...args: string[]) => Promise<unknown>).bind(store)
    const keepMiss = (MISSES_KEPT as readonly string[]).includes(name)
    lookups[name] = (...args: string[]) => lookup(`${name}\u0000${args.join('\u0000')}`, () => read(...args), keepMiss)
  }

  const writes = new Map<PropertyKey, unknown>()
  for (const name of WRITES) {
    const write = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store)
    writes.set(name, async (...args: unknown[]) => {
      try {
        return await write(...args)
      } finally {
        clear()
      }
    })
  }
  // reads and close() go to the store as they are
  const tenants = new Proxy(store, { get: (target, prop, receiver) => writes.get(prop) ?? Reflect.get(target, prop, receiver) })
  return { tenants, lookups: lookups as unknown as TenantLookups }
}

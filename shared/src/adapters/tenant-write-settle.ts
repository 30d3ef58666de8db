import type { TenantStore } from '../ports/tenant-store.ts'

/** A monotonic clock in ms and a wait on it (tests: a fake one whose sleep moves it, so nothing is timed). */
export interface MonotonicTimer {
  now(): number
  sleep(ms: number): Promise<void>
}

export const realTimer: MonotonicTimer = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
}

/**
 * Writes that change or remove a record some instance may hold in its lookup cache, or a list that
 * decides what a push stores (an account's custom field definitions, read by the upsert worker):
 * they return only once every instance's lookups reflect them. Every change that removes or
 * restores access is one of these.
 */
const SETTLED = [
  'updateAccount',
  'updateConnection',
  'updateApiKey',
  'updateLocation',
  'updateIntegration',
  'deleteIntegration',
  'createCustomField',
] as const satisfies ReadonlyArray<keyof TenantStore>

/**
 * Writes that add a record under a new id or hash: its own lookup answered null before, and nulls
 * are not cached (tenant-lookup-cache.ts), so a new account (its public id was free), key or
 * integration works on every instance at once. A connection's id is random and new, so it too
 * works everywhere at once, unless someone pushed to that very id before it existed: an instance
 * that kept that miss finds the connection within `boundMs` (every write changes the version,
 * which clears the misses; docs/architecture.md, "Unknown source ids"). What they add
 * to an account's lists (its connections, its integrations) may reach another instance's cache up
 * to `boundMs` later; no access depends on that alone (a partner CRM connection serves nothing
 * before its first location, whose putLocation comes after). deleteAccountData: only tests call it,
 * to remove a tenant they are done with. They return at once.
 */
const IMMEDIATE = ['createAccount', 'createApiKey', 'createConnection', 'createIntegration', 'deleteAccountData'] as const satisfies ReadonlyArray<
  keyof TenantStore
>

/** every write of the port is classified (a new write method must be put in one list: the compiler says so) */
type Unclassified = Exclude<
  keyof TenantStore,
  (typeof SETTLED)[number] | (typeof IMMEDIATE)[number] | 'putLocation' | 'close' | `get${string}` | `list${string}` | `find${string}`
>
const everyWriteClassified: [Unclassified] extends [never] ? true : Unclassified = true
void everyWriteClassified

/**
 * The TenantStore whose writes return only once they are in force on every instance. Another
 * instance's lookup cache answers from memory only under a version confirmed by a read that
 * started at most `boundMs` ago (TenantConfigVersion); the write is committed when it returns, so
 * once more than `boundMs` has passed since then, every version an instance can still confirm was
 * read after the commit and includes it. Waiting that long after each SETTLED write — returned or
 * failed, whose outcome is then unknown — makes "when the call returns, it is in force
 * everywhere" hold for every caller of the port (management API, portal, CLI, the dispatcher's
 * own deactivation), including routes added later. putLocation waits when a record of that
 * location id was there before (adding a removed location again restores access; a first one is
 * new, as above): one read more per location added. The cost is `boundMs` per waiting write:
 * 1 s on Firestore, 10 ms on the embedded store.
 */
export function settleTenantWrites(store: TenantStore, boundMs: number, timer: MonotonicTimer = realTimer): TenantStore {
  async function settle(returnedAt: number): Promise<void> {
    // strictly more than boundMs: a version read that started exactly boundMs before may still confirm
    const until = returnedAt + boundMs
    for (let now = timer.now(); now <= until; now = timer.now()) await timer.sleep(Math.floor(until - now) + 1)
  }
  async function settled<T>(write: Promise<T>): Promise<T> {
    try {
      return await write
    } finally {
      await settle(timer.now())
    }
  }
  const writes = new Map<PropertyKey, unknown>()
  for (const name of SETTLED) {
    const write = (store[name] as (...args: unknown[]) => Promise<unknown>).bind(store)
    writes.set(name, (...args: unknown[]) => settled(write(...args)))
  }
  const putLocation: TenantStore['putLocation'] = async (location, options) => {
    const before = await store.getLocation(location.account_id, location.location_id)
    // options carry the change's audit entry (WriteOptions): passed on, or the entry is lost
    return before === null ? store.putLocation(location, options) : settled(store.putLocation(location, options))
  }
  writes.set('putLocation', putLocation)
  // immediate writes, reads and close() go to the store as they are
  return new Proxy(store, { get: (target, prop, receiver) => writes.get(prop) ?? Reflect.get(target, prop, receiver) })
}

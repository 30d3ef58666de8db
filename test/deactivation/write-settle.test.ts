import { describe, expect, it } from 'vitest'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import { settleTenantWrites, type MonotonicTimer } from '@lsv/shared/adapters/tenant-write-settle.ts'

/**
 * settleTenantWrites alone, on a fake monotonic clock: which writes wait, how long, and from when.
 * The two-instance behaviour it buys is in-force-on-return.test.ts.
 */

const BOUND = 1000

/** a store whose every method records its call and takes `takesMs` of the fake clock; `fail` makes writes throw */
function fakeStore(clock: { t: number }, takesMs = 0, fail = false, locationBefore: object | null = null) {
  const calls: string[] = []
  const store = new Proxy({} as TenantStore, {
    get: (_target, prop) => async () => {
      calls.push(String(prop))
      if (prop === 'getLocation') return locationBefore
      clock.t += takesMs
      if (fail) throw new Error('write failed (test)')
      return null
    },
  })
  return { store, calls }
}

function timer(clock: { t: number }): MonotonicTimer & { slept: number[] } {
  const slept: number[] = []
  return {
    slept,
    now: () => clock.t,
    sleep: async (ms) => {
      slept.push(ms)
      clock.t += ms
    },
  }
}

const SETTLED: Array<keyof TenantStore> = ['updateAccount', 'updateConnection', 'updateApiKey', 'updateLocation', 'updateIntegration', 'createCustomField']
const IMMEDIATE = ['createAccount', 'createApiKey', 'createConnection', 'createIntegration', 'deleteAccountData'] as const

describe('settleTenantWrites', () => {
  // mutation: a write left out of SETTLED (or the wait removed) returns with the clock unmoved
  it.each(SETTLED)('%s returns only once more than the bound has passed since the store answered', async (name) => {
    const clock = { t: 0 }
    const { store } = fakeStore(clock, 250)
    const t = timer(clock)
    await (settleTenantWrites(store, BOUND, t)[name] as () => Promise<unknown>)()
    // from the store's answer (250), not from the call (0): mutation `returnedAt` taken before the write
    expect(clock.t).toBeGreaterThan(250 + BOUND)
    // strictly more, by at most 1 ms: mutation `<=` → `<` in the loop, or no `+ 1`, ends at exactly the bound
    expect(clock.t).toBe(250 + BOUND + 1)
  })

  // mutation: one of them moved to SETTLED (every test tenant on Firestore pays a second per connection)
  it.each(IMMEDIATE)('%s returns at once (its lookups answered null before, and nulls are never cached)', async (name) => {
    const clock = { t: 0 }
    const t = timer(clock)
    await (settleTenantWrites(fakeStore(clock).store, BOUND, t)[name] as (x: unknown) => Promise<unknown>)(null)
    expect(t.slept).toEqual([])
  })

  // mutation: the wait in a `then` instead of `finally` (a failed write, whose outcome is unknown, answers before it is in force)
  it('a failed write waits too, then fails with its own error', async () => {
    const clock = { t: 0 }
    const t = timer(clock)
    await expect(settleTenantWrites(fakeStore(clock, 0, true).store, BOUND, t).updateAccount('a', {})).rejects.toThrow('write failed (test)')
    expect(clock.t).toBe(BOUND + 1)
  })

  // mutation: putLocation always immediate (adding a removed location again is a restore: it must wait)
  it('putLocation waits when a record of that location id was there before (a removed one: a restore), not for a new one', async () => {
    const location = { account_id: 'a', location_id: 'loc' } as never
    const again = { t: 0 }
    const removed = fakeStore(again, 0, false, { active: false })
    await settleTenantWrites(removed.store, BOUND, timer(again)).putLocation(location)
    expect(removed.calls).toEqual(['getLocation', 'putLocation'])
    expect(again.t).toBe(BOUND + 1)
    // mutation: putLocation always waits (every test tenant with a location pays the bound)
    const first = { t: 0 }
    const fresh = fakeStore(first)
    await settleTenantWrites(fresh.store, BOUND, timer(first)).putLocation(location)
    expect(fresh.calls).toEqual(['getLocation', 'putLocation'])
    expect(first.t).toBe(0)
  })

  it('reads and close() go to the store without waiting', async () => {
    const clock = { t: 0 }
    const t = timer(clock)
    const { store, calls } = fakeStore(clock)
    const settled = settleTenantWrites(store, BOUND, t)
    await settled.getAccount('a')
    await settled.listConnections('a')
    await settled.close()
    expect(calls).toEqual(['getAccount', 'listConnections', 'close'])
    expect(t.slept).toEqual([])
  })

  // a real timer that wakes early (setTimeout may fire up to ~1 ms before its delay on the monotonic clock) sleeps again
  it('sleeps again until the deadline has passed, whatever a sleep actually took', async () => {
    const clock = { t: 0 }
    const early: MonotonicTimer = {
      now: () => clock.t,
      sleep: async (ms) => {
        clock.t += ms / 2
      },
    }
    await settleTenantWrites(fakeStore(clock).store, BOUND, early).updateConnection('c', {})
    expect(clock.t).toBeGreaterThan(BOUND)
  })
})

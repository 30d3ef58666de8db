import { describe, expect, it } from 'vitest'
import { decide, ExhaustionMemo, memoKeyOf, rejection } from '@lsv/shared/adapters/rate-limit-windows.ts'
import { slotOf } from '@lsv/shared/model/rate-limit-window.ts'
import type { RateLimiter } from '@lsv/shared/ports/rate-limiter.ts'
import type { RateLimitWindow } from '@lsv/shared/model/rate-limit-window.ts'
import { consumePushQuota, PUSH_WINDOWS, pushQuotaKey } from '@lsv/shared/domain/ingest/rate-limit.ts'

/**
 * The window arithmetic and the exhaustion memo both limiter adapters share (windows.ts), and the
 * push quota on top (contract section 8), as units. Through the adapters (conformance suite) the
 * memo is invisible: a memo that never answers gives the same decisions one store trip later, so
 * only these tests see it answer wrongly or grow without bound. Written against the mutants
 * StrykerJS found surviving (npm run test:mutation -- rate-limit).
 */

const minute: RateLimitWindow = { name: 'm', limit: 3, seconds: 60 }
const hour: RateLimitWindow = { name: 'h', limit: 5, seconds: 3600 }

describe('slotOf and rejection', () => {
  it('a slot is the window-length interval aligned to the epoch that holds nowMs', () => {
    expect(slotOf(minute, 125_000)).toEqual({ window: minute, startMs: 120_000, endMs: 180_000 })
    expect(slotOf(minute, 120_000)).toEqual({ window: minute, startMs: 120_000, endMs: 180_000 })
    expect(slotOf(minute, 179_999)).toEqual({ window: minute, startMs: 120_000, endMs: 180_000 })
    expect(slotOf(hour, 7_199_999)).toEqual({ window: hour, startMs: 3_600_000, endMs: 7_200_000 })
  })

  it('a rejection names the window and the whole seconds to its end, at least 1', () => {
    const slot = slotOf(minute, 125_000)
    expect(rejection(slot, 125_000)).toEqual({ allowed: false, window: minute, resetInSeconds: 55 })
    expect(rejection(slot, 125_001)).toEqual({ allowed: false, window: minute, resetInSeconds: 55 })
    expect(rejection(slot, 179_500)).toEqual({ allowed: false, window: minute, resetInSeconds: 1 })
    expect(rejection(slot, 180_000)).toEqual({ allowed: false, window: minute, resetInSeconds: 1 })
  })

  it('the memo key carries the limit', () => {
    const slot = slotOf(minute, 0)
    expect(memoKeyOf('k_m_0', slot)).toBe('k_m_0:3')
    expect(memoKeyOf('k_m_0', slotOf({ ...minute, limit: 4 }, 0))).toBe('k_m_0:4')
  })
})

describe('ExhaustionMemo', () => {
  it("answers the first remembered window (in the caller's order) that is still exhausted, else -1", () => {
    const memo = new ExhaustionMemo()
    expect(memo.firstExhausted([], 0)).toBe(-1)
    expect(memo.firstExhausted(['a', 'b'], 0)).toBe(-1)
    memo.remember('b', 200, 0)
    memo.remember('c', 100, 0)
    expect(memo.firstExhausted(['a', 'b', 'c'], 50)).toBe(1)
    expect(memo.firstExhausted(['a', 'c', 'b'], 50)).toBe(1)
    expect(memo.firstExhausted(['c', 'b'], 50)).toBe(0)
    expect(memo.firstExhausted(['x', 'y', 'c'], 99)).toBe(2)
    // an exhaustion ends with its window: at `until` the key is admitted again
    expect(memo.firstExhausted(['c'], 100)).toBe(-1)
    expect(memo.firstExhausted(['c', 'b'], 100)).toBe(1)
    expect(memo.firstExhausted(['b'], 200)).toBe(-1)
    expect(memo.firstExhausted(['b'], 199)).toBe(0)
  })

  it('below its size, remembering keeps every entry, expired ones included', () => {
    const memo = new ExhaustionMemo(3)
    memo.remember('a', 100, 0)
    memo.remember('b', 300, 150)
    // a's entry is expired at 150, but nothing forced a sweep: it still answers for t < 100
    expect(memo.firstExhausted(['a'], 50)).toBe(0)
    expect(memo.firstExhausted(['b'], 160)).toBe(0)
  })

  it('at its size, expired entries are dropped first; still full, the oldest live one goes', () => {
    const memo = new ExhaustionMemo(2)
    memo.remember('a', 100, 0)
    memo.remember('b', 300, 0)
    // full (2 of 2): a has expired at 150 and is swept, b stays
    memo.remember('c', 400, 150)
    expect(memo.firstExhausted(['a'], 50)).toBe(-1)
    expect(memo.firstExhausted(['b', 'c'], 160)).toBe(0)
    expect(memo.firstExhausted(['c'], 160)).toBe(0)
    // full of live entries: the oldest (b) is forgotten for d
    memo.remember('d', 500, 160)
    expect(memo.firstExhausted(['b'], 170)).toBe(-1)
    expect(memo.firstExhausted(['c'], 170)).toBe(0)
    expect(memo.firstExhausted(['d'], 170)).toBe(0)
  })

  it('the sweep drops what has expired by now (at `until` included) even when it is not the oldest', () => {
    const memo = new ExhaustionMemo(2)
    memo.remember('old-live', 300, 0)
    memo.remember('new-ending', 150, 0)
    // full at 150: new-ending ends exactly now and is swept; the older live entry stays
    memo.remember('c', 400, 150)
    expect(memo.firstExhausted(['old-live'], 160)).toBe(0)
    expect(memo.firstExhausted(['new-ending'], 149)).toBe(-1)
    expect(memo.firstExhausted(['c'], 160)).toBe(0)
  })

  it('the default size is 10,000 entries', () => {
    const memo = new ExhaustionMemo()
    for (let i = 0; i < 10_000; i++) memo.remember(`k${i}`, 1_000, 0)
    expect(memo.firstExhausted(['k0'], 1)).toBe(0)
    memo.remember('one-more', 1_000, 0)
    expect(memo.firstExhausted(['k0'], 1)).toBe(-1)
    expect(memo.firstExhausted(['k1', 'one-more'], 1)).toBe(0)
  })
})

describe('decide', () => {
  const slots = [slotOf(minute, 10_000), slotOf(hour, 10_000)]
  const keys = ['m:3', 'h:5']

  it('admitted below every limit: allowed, nothing remembered', () => {
    const memo = new ExhaustionMemo()
    expect(decide(true, [2, 4], slots, keys, memo, 10_000)).toEqual({ allowed: true })
    expect(memo.firstExhausted(keys, 10_000)).toBe(-1)
  })

  it('admitted and now at a limit: allowed, and that window is remembered until its end', () => {
    const memo = new ExhaustionMemo()
    expect(decide(true, [3, 4], slots, keys, memo, 10_000)).toEqual({ allowed: true })
    expect(memo.firstExhausted(keys, 10_000)).toBe(0)
    expect(memo.firstExhausted(keys, 59_999)).toBe(0)
    expect(memo.firstExhausted(keys, 60_000)).toBe(-1)
    expect(memo.firstExhausted(['h:5'], 10_000)).toBe(-1)
  })

  it('refused: names the first exhausted window, remembers every exhausted one', () => {
    const memo = new ExhaustionMemo()
    expect(decide(false, [3, 5], slots, keys, memo, 10_000)).toEqual({ allowed: false, window: minute, resetInSeconds: 50 })
    expect(memo.firstExhausted(['h:5'], 3_599_999)).toBe(0)
    const onlyLong = new ExhaustionMemo()
    expect(decide(false, [1, 5], slots, keys, onlyLong, 10_000)).toEqual({ allowed: false, window: hour, resetInSeconds: 3590 })
    expect(onlyLong.firstExhausted(['m:3'], 10_000)).toBe(-1)
  })
})

describe('push quota (contract section 8)', () => {
  it('the windows and the counter keys', () => {
    expect(PUSH_WINDOWS).toEqual([
      { name: 'push-60s', limit: 120, seconds: 60 },
      { name: 'push-24h', limit: 50_000, seconds: 86_400 },
    ])
    expect(pushQuotaKey({ kind: 'key', keyId: 'k1' })).toBe('push:key:k1')
    expect(pushQuotaKey({ kind: 'source', connectionId: 'c1' })).toBe('push:source:c1')
    expect(pushQuotaKey({ kind: 'location', accountId: 'a1', locationId: 'l1' })).toBe('push:location:a1:l1')
    expect(pushQuotaKey({ kind: 'location-tokenless', accountId: 'a1', locationId: 'l1' })).toBe('push:location-tokenless:a1:l1')
  })

  const limiter = (decision: Awaited<ReturnType<RateLimiter['consume']>>, seen: unknown[] = []): RateLimiter => ({
    async consume(key, windows, nowMs) {
      seen.push({ key, windows, nowMs })
      return decision
    },
    async peek(_key, windows) {
      return windows.map(() => 0)
    },
    async addCounts() {},
    async updateNote() {},
    async readNotes(keys) {
      return keys.map(() => null)
    },
    async readCounts(keys) {
      return keys.map(() => 0)
    },
    async close() {},
  })
  const clock = { now: () => 1_234_000 }
  const retryAfterOf = async (decision: Awaited<ReturnType<RateLimiter['consume']>>) => {
    try {
      await consumePushQuota({ rateLimiter: limiter(decision), clock } as never, { kind: 'key', keyId: 'k' })
      return 'admitted'
    } catch (err) {
      const e = err as { code: string; headers: Record<string, string> }
      return `${e.code} ${e.headers['retry-after']}`
    }
  }

  it("counts under the subject's key, in the push windows, at the clock's time", async () => {
    const seen: unknown[] = []
    await consumePushQuota({ rateLimiter: limiter({ allowed: true }, seen), clock } as never, { kind: 'source', connectionId: 'src_1' })
    expect(seen).toEqual([{ key: 'push:source:src_1', windows: PUSH_WINDOWS, nowMs: 1_234_000 }])
  })

  it('Retry-After: 60 for the 60-second window, the seconds left (at least 1) for the 24-hour one', async () => {
    expect(await retryAfterOf({ allowed: true })).toBe('admitted')
    expect(await retryAfterOf({ allowed: false, window: PUSH_WINDOWS[0]!, resetInSeconds: 12 })).toBe('rate_limited 60')
    expect(await retryAfterOf({ allowed: false, window: PUSH_WINDOWS[1]!, resetInSeconds: 4321 })).toBe('rate_limited 4321')
    expect(await retryAfterOf({ allowed: false, window: PUSH_WINDOWS[1]!, resetInSeconds: 0 })).toBe('rate_limited 1')
  })
})

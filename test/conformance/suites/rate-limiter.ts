import { afterAll, beforeAll, expect, it } from 'vitest'
import type { RateLimiter } from '@lsv/shared/ports/rate-limiter.ts'
import type { RateLimitWindow } from '@lsv/shared/model/rate-limit-window.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/**
 * Two limiters over one store (two Firestore clients, or two EmbeddedDb handles on one file),
 * as two instances of a service would be. `close` gets the span of `nowMs` values the suite used,
 * so a shared store can remove the counters it created.
 */
export interface RateLimiterHarness {
  limiter: RateLimiter
  other: RateLimiter
  close(used: { fromMs: number; toMs: number }): Promise<void>
}

const DAY_MS = 86_400_000
/** a random whole day far in the future: aligned to every window length used here, and unique per run */
const BASE = Date.UTC(2040, 0, 1) + Math.floor(Math.random() * 3650) * DAY_MS
const sec = (s: number) => BASE + s * 1000

const minute = (limit: number, name = 'short'): RateLimitWindow => ({ name, limit, seconds: 60 })
const hour = (limit: number, name = 'long'): RateLimitWindow => ({ name, limit, seconds: 3600 })

export function rateLimiterConformance(open: () => Promise<RateLimiterHarness>): void {
  let h: RateLimiterHarness
  const key = () => `key:${randomSuffix()}`
  const allowedCount = async (limiter: RateLimiter, k: string, windows: RateLimitWindow[], nowMs: number, n: number) => {
    let allowed = 0
    for (let i = 0; i < n; i++) if ((await limiter.consume(k, windows, nowMs)).allowed) allowed++
    return allowed
  }

  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    await h.close({ fromMs: BASE, toMs: BASE + DAY_MS })
  })

  it('admits exactly the limit in a window, then answers with the window and the seconds to its end', async () => {
    const k = key()
    for (let i = 0; i < 3; i++) expect(await h.limiter.consume(k, [minute(3)], sec(5 + i))).toEqual({ allowed: true })
    expect(await h.limiter.consume(k, [minute(3)], sec(10))).toEqual({ allowed: false, window: minute(3), resetInSeconds: 50 })
    // a fraction of a second left still says at least 1
    expect(await h.limiter.consume(k, [minute(3)], sec(59) + 800)).toEqual({ allowed: false, window: minute(3), resetInSeconds: 1 })
    // another key has its own count
    expect(await h.limiter.consume(key(), [minute(3)], sec(10))).toEqual({ allowed: true })
  })

  it('starts a fresh count when the window rolls over', async () => {
    const k = key()
    expect(await allowedCount(h.limiter, k, [minute(2)], sec(120), 4)).toBe(2)
    expect(await allowedCount(h.limiter, k, [minute(2)], sec(179), 2)).toBe(0)
    expect(await allowedCount(h.limiter, k, [minute(2)], sec(180), 4)).toBe(2)
  })

  it('does not count a refused request in any window', async () => {
    const k = key()
    const windows = [minute(2), hour(5)]
    // minute 1: 2 admitted, 3 refused by the short window (they must not reach the long count)
    expect(await allowedCount(h.limiter, k, windows, sec(3600), 5)).toBe(2)
    // minute 2: 2 more
    expect(await allowedCount(h.limiter, k, windows, sec(3660), 5)).toBe(2)
    // minute 3: one more reaches the hour limit of 5; then the long window refuses
    expect(await h.limiter.consume(k, windows, sec(3720))).toEqual({ allowed: true })
    expect(await h.limiter.consume(k, windows, sec(3721))).toEqual({ allowed: false, window: hour(5), resetInSeconds: 3600 - 121 })
    // the next hour admits again
    expect(await h.limiter.consume(k, windows, sec(7200))).toEqual({ allowed: true })
  })

  it('names the first exhausted window when several are', async () => {
    const k = key()
    const windows = [minute(1, 'a'), hour(1, 'b')]
    expect(await h.limiter.consume(k, windows, sec(10_800))).toEqual({ allowed: true })
    expect(await h.limiter.consume(k, windows, sec(10_830))).toEqual({ allowed: false, window: windows[0], resetInSeconds: 30 })
    expect(await h.limiter.consume(k, windows, sec(10_860))).toEqual({ allowed: false, window: windows[1], resetInSeconds: 3540 })
  })

  it('a refusal by a later window leaves the earlier windows counted as before', async () => {
    const k = key()
    const windows = [minute(5, 'a'), hour(1, 'b')]
    expect(await h.limiter.consume(k, windows, sec(12_600))).toEqual({ allowed: true })
    expect(await h.limiter.consume(k, windows, sec(12_601))).toMatchObject({ allowed: false, window: windows[1] })
    expect(await h.other.consume(k, windows, sec(12_602))).toMatchObject({ allowed: false, window: windows[1] })
    expect(await h.limiter.peek(k, windows, sec(12_603))).toEqual([1, 1])
  })

  it('a window whose limit is 0 admits nothing and counts nothing', async () => {
    const k = key()
    const windows = [minute(5, 'a'), hour(0, 'b')]
    expect(await h.limiter.consume(k, windows, sec(13_000))).toMatchObject({ allowed: false, window: windows[1] })
    expect(await h.limiter.consume(k, [hour(0, 'c')], sec(13_001))).toMatchObject({ allowed: false })
    expect(await h.limiter.peek(k, [minute(5, 'a'), hour(0, 'c')], sec(13_002))).toEqual([0, 0])
  })

  it('shares the count between instances', async () => {
    const k = key()
    expect(await allowedCount(h.limiter, k, [minute(3)], sec(14_400), 2)).toBe(2)
    expect(await h.other.consume(k, [minute(3)], sec(14_401))).toEqual({ allowed: true })
    expect(await h.other.consume(k, [minute(3)], sec(14_402))).toMatchObject({ allowed: false })
    expect(await h.limiter.consume(k, [minute(3)], sec(14_403))).toMatchObject({ allowed: false })
  })

  it('admits at most the limit under concurrent calls from two instances', async () => {
    const k = key()
    const windows = [minute(10), hour(100)]
    const decisions = await Promise.all(Array.from({ length: 24 }, (_, i) => (i % 2 ? h.other : h.limiter).consume(k, windows, sec(18_000 + (i % 5)))))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
    for (const d of decisions) if (!d.allowed) expect(d.window.name).toBe('short')
    // the refused ones did not count in the hour: 10 more are admitted next minute
    expect(await allowedCount(h.limiter, k, windows, sec(18_060), 12)).toBe(10)
  })

  it('peek reads the counts of the current windows without counting', async () => {
    const k = key()
    const windows = [minute(5), hour(50)]
    expect(await h.limiter.peek(k, windows, sec(21_600))).toEqual([0, 0])
    await h.limiter.consume(k, windows, sec(21_600))
    await h.other.consume(k, windows, sec(21_601))
    expect(await h.other.peek(k, windows, sec(21_602))).toEqual([2, 2])
    expect(await h.limiter.peek(k, windows, sec(21_602))).toEqual([2, 2])
    // the next minute: a new short window, the same hour
    expect(await h.limiter.peek(k, windows, sec(21_660))).toEqual([0, 2])
  })

  it('plain counters add across instances, in one call for several keys, and read 0 once expired', async () => {
    const a = key()
    const b = key()
    const expireAt = sec(30_000)
    await h.limiter.addCounts(
      [
        { key: a, by: 2 },
        { key: b, by: 1 },
      ],
      expireAt,
    )
    await h.other.addCounts([{ key: a, by: 3 }], expireAt)
    expect(await h.limiter.readCounts([a, b, key()], sec(25_000))).toEqual([5, 1, 0])
    expect(await h.other.readCounts([b, a], sec(25_000))).toEqual([1, 5])
    expect(await h.limiter.readCounts([a], expireAt)).toEqual([0])
    // a counter never counts as a window of the same key
    expect(await h.limiter.peek(a, [minute(10)], sec(25_000))).toEqual([0])
  })

  it('notes: an update sees what another instance wrote, reads answer in key order, and an expired note is null', async () => {
    const a = key()
    const b = key()
    const expireAt = sec(30_000)
    // mutation: an updateNote that passes null (or writes without reading) loses the first text
    await h.limiter.updateNote(a, (current) => `${current ?? ''}1`, expireAt, sec(25_000))
    await h.other.updateNote(a, (current) => `${current ?? ''}2`, expireAt, sec(25_001))
    expect(await h.limiter.readNotes([b, a], sec(25_002))).toEqual([null, '12'])
    expect(await h.other.readNotes([a], expireAt)).toEqual([null])
    // an expired note is started again, not appended to
    await h.limiter.updateNote(a, (current) => `${current ?? 'fresh'}`, sec(40_000), expireAt)
    expect(await h.limiter.readNotes([a], sec(30_001))).toEqual(['fresh'])
  })
}

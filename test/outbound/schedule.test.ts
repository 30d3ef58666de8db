import { describe, expect, it } from 'vitest'
import { MAX_ATTEMPTS, RETRY_ANCHORS_MS, parseRetryAfter, retryDelayMs } from '@lsv/shared/domain/webhooks/schedule.ts'

describe('retry schedule', () => {
  it('is anchored at immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(RETRY_ANCHORS_MS).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000])
    expect(MAX_ATTEMPTS).toBe(8)
  })

  it('jitters each delay within ±20% of its anchor', () => {
    for (let next = 2; next <= MAX_ATTEMPTS; next++) {
      const anchor = RETRY_ANCHORS_MS[next - 1]!
      expect(retryDelayMs(next, 0)).toBe(Math.round(anchor * 0.8))
      expect(retryDelayMs(next, 0.5)).toBe(anchor)
      expect(retryDelayMs(next, 0.999999)).toBeLessThanOrEqual(Math.round(anchor * 1.2))
    }
  })

  it('has no attempt after the eighth', () => {
    expect(retryDelayMs(MAX_ATTEMPTS + 1, 0.5)).toBeNull()
  })

  it('Retry-After can only delay the next attempt, capped at 10 h', () => {
    expect(retryDelayMs(2, 0.5, 60_000)).toBe(60_000)
    expect(retryDelayMs(4, 0.5, 60_000)).toBe(1_800_000)
    expect(retryDelayMs(2, 0.5, 100 * 3_600_000)).toBe(36_000_000)
  })

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.UTC(2026, 8, 4, 12, 0, 0)
    expect(parseRetryAfter('120', now)).toBe(120_000)
    expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000)
    expect(parseRetryAfter('soon', now)).toBeNull()
    expect(parseRetryAfter(undefined, now)).toBeNull()
  })
})

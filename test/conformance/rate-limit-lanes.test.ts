import { describe, expect, it } from 'vitest'
import { RateLimitLanes, roomFor, type ClaimBatch } from '@lsv/shared/adapters/rate-limit-lanes.ts'
import { ExhaustionMemo } from '@lsv/shared/adapters/rate-limit-windows.ts'
import { slotOf, type RateLimitDecision, type RateLimitWindow } from '@lsv/shared/model/rate-limit-window.ts'

/**
 * The Firestore limiter's per-instance coalescing (shared/src/adapters/rate-limit-lanes.ts), as a
 * unit against a claim function that records what it was asked. Through the conformance suite
 * (rate-limiter.test.ts) coalescing is invisible: one transaction per request gives the same
 * decisions, only slower under contention (reliability 9 on the Firestore emulator shows the time).
 */

const minute: RateLimitWindow = { name: 'm', limit: 3, seconds: 60 }
const hour: RateLimitWindow = { name: 'h', limit: 5, seconds: 3600 }
const NOW = 3_600_000 + 10_000
const slots = [slotOf(minute, NOW), slotOf(hour, NOW)]
const memoKeys = ['k_m:3', 'k_h:5']

/** a store holding the counts of one lane's windows; each claim is one transaction on it */
function store(counts: number[]) {
  const claims: number[] = []
  let inFlight = 0
  let maxInFlight = 0
  let gate: Promise<void> = Promise.resolve()
  const claim: ClaimBatch = async (n) => {
    claims.push(n)
    maxInFlight = Math.max(maxInFlight, ++inFlight)
    await gate
    const current = [...counts]
    const admitted = roomFor(n, current, slots)
    for (let i = 0; i < counts.length; i++) counts[i]! += admitted
    inFlight--
    return { current, admitted }
  }
  return {
    claim,
    claims,
    maxInFlight: () => maxInFlight,
    hold() {
      let open = () => {}
      gate = new Promise<void>((r) => (open = r))
      return () => {
        gate = Promise.resolve()
        open()
      }
    },
  }
}

describe('roomFor', () => {
  it('is the room left in the fullest window, between 0 and n', () => {
    expect(roomFor(10, [0, 0], slots)).toBe(3)
    expect(roomFor(10, [1, 3], slots)).toBe(2)
    expect(roomFor(1, [0, 0], slots)).toBe(1)
    // Mutation: no clamp at 0 -> a window counted past its limit gives negative room
    expect(roomFor(4, [5, 0], slots)).toBe(0)
  })
})

describe('RateLimitLanes', () => {
  // Mutation: one claim per request (no coalescing) -> claims is [1, 1, 1, 1, 1]
  it('the requests of one turn are claimed in one transaction; the first come are admitted, the rest refused by the full window', async () => {
    const s = store([0, 0])
    const lanes = new RateLimitLanes(new ExhaustionMemo())
    const decisions = await Promise.all([0, 1, 2, 3, 4].map((i) => lanes.consume('lane', slots, memoKeys, NOW + i * 1000, s.claim)))
    expect(s.claims).toEqual([5])
    expect(decisions.slice(0, 3)).toEqual([{ allowed: true }, { allowed: true }, { allowed: true }])
    // each refusal counts the seconds left from its own instant
    expect(decisions.slice(3)).toEqual<RateLimitDecision[]>([
      { allowed: false, window: minute, resetInSeconds: 47 },
      { allowed: false, window: minute, resetInSeconds: 46 },
    ])
  })

  // Mutation: every arrival starts its own drain -> two claims in flight at once on one lane
  it('at most one claim per lane is in flight; arrivals meanwhile are claimed together by the next one', async () => {
    const s = store([0, 0])
    const lanes = new RateLimitLanes(new ExhaustionMemo())
    const open = s.hold()
    const first = lanes.consume('lane', slots, memoKeys, NOW, s.claim)
    await new Promise((r) => setImmediate(r))
    expect(s.claims).toEqual([1])
    const later = [1, 2, 3].map(() => lanes.consume('lane', slots, memoKeys, NOW, s.claim))
    await new Promise((r) => setImmediate(r))
    expect(s.claims).toEqual([1])
    open()
    const decisions = await Promise.all([first, ...later])
    expect(s.claims).toEqual([1, 3])
    expect(s.maxInFlight()).toBe(1)
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3)
  })

  it('lanes are independent: one held claim does not hold another key', async () => {
    const held = store([0, 0])
    const free = store([0, 0])
    const lanes = new RateLimitLanes(new ExhaustionMemo())
    const open = held.hold()
    const waiting = lanes.consume('a', slots, memoKeys, NOW, held.claim)
    expect(await lanes.consume('b', slots, memoKeys, NOW, free.claim)).toEqual({ allowed: true })
    open()
    expect(await waiting).toEqual({ allowed: true })
  })

  // Mutation: a failed claim leaves the lane in place -> the next request waits forever (test times out)
  it('a failed claim fails its own batch; the next request is claimed again', async () => {
    const lanes = new RateLimitLanes(new ExhaustionMemo())
    const failing: ClaimBatch = async () => {
      throw new Error('store unavailable')
    }
    await expect(lanes.consume('lane', slots, memoKeys, NOW, failing)).rejects.toThrow('store unavailable')
    const s = store([0, 0])
    expect(await lanes.consume('lane', slots, memoKeys, NOW, s.claim)).toEqual({ allowed: true })
  })

  // Mutation: the batch's counts not given to the memo -> later requests still go to the store
  it('a batch that fills a window tells the memo, so later requests are refused without a claim', async () => {
    const memo = new ExhaustionMemo()
    const s = store([0, 3])
    const lanes = new RateLimitLanes(memo)
    expect(await Promise.all([1, 2, 3].map(() => lanes.consume('lane', slots, memoKeys, NOW, s.claim)))).toEqual([
      { allowed: true },
      { allowed: true },
      { allowed: false, window: hour, resetInSeconds: 3590 },
    ])
    expect(memo.firstExhausted(memoKeys, NOW)).toBe(1)
  })
})

import type { RateLimitDecision, WindowSlot } from '../model/rate-limit-window.ts'
import { decide, type ExhaustionMemo, rejection } from './rate-limit-windows.ts'

/**
 * How many of `n` requests the windows still admit, given the stored counts `current`: the room
 * left in the fullest window, never below 0 nor above n.
 */
export function roomFor(n: number, current: readonly number[], slots: readonly WindowSlot[]): number {
  let room = n
  for (let i = 0; i < slots.length; i++) room = Math.min(room, slots[i]!.window.limit - current[i]!)
  return Math.max(0, room)
}

/**
 * One store transaction for `n` waiting requests of one key and slot set: reads the counts,
 * stores `current + admitted` where `admitted` is what `roomFor` allows (nothing when 0), and
 * answers what it read and admitted. It may retry internally on contention.
 */
export type ClaimBatch = (n: number) => Promise<{ current: number[]; admitted: number }>

interface Waiter {
  nowMs: number
  resolve: (d: RateLimitDecision) => void
  reject: (err: unknown) => void
}

interface Lane {
  slots: readonly WindowSlot[]
  memoKeys: readonly string[]
  claim: ClaimBatch
  waiting: Waiter[]
}

/**
 * Per-instance coalescing of the requests of one key in one slot set (issue 23): at most one
 * store transaction per lane is in flight in this process; requests arriving meanwhile wait and
 * are claimed together by the next one (first come, first admitted). Under 300 concurrent pushes
 * on one key per instance, each request otherwise ran its own optimistic transaction on the same
 * two documents: they serialized, retried with backoff, and took longer than the edge's
 * dependency deadline (docs/architecture.md, "Dependency deadlines"). Coalesced, only instances
 * contend, a batch costs one read and one write, and the limit stays exact: the batch admits
 * what the counts it read leave room for, in a transaction like any single request's.
 *
 * A request abandoned by its caller while it waits (the edge's deadline answered 503) is still
 * claimed with its batch: the limiter may count a request that was answered 503, so it can only
 * refuse early, never admit more than the limit.
 */
export class RateLimitLanes {
  #lanes = new Map<string, Lane>()
  #memo: ExhaustionMemo

  constructor(memo: ExhaustionMemo) {
    this.#memo = memo
  }

  /** queues one request on the lane `laneKey` (the slot set's memo keys); `claim` is used when it starts the lane */
  consume(laneKey: string, slots: readonly WindowSlot[], memoKeys: readonly string[], nowMs: number, claim: ClaimBatch): Promise<RateLimitDecision> {
    return new Promise<RateLimitDecision>((resolve, reject) => {
      const lane = this.#lanes.get(laneKey)
      if (lane) {
        lane.waiting.push({ nowMs, resolve, reject })
        return
      }
      const fresh: Lane = { slots, memoKeys, claim, waiting: [{ nowMs, resolve, reject }] }
      this.#lanes.set(laneKey, fresh)
      // the requests of this event-loop turn join the first batch
      setImmediate(() => void this.#drain(laneKey, fresh))
    })
  }

  async #drain(laneKey: string, lane: Lane): Promise<void> {
    while (lane.waiting.length > 0) {
      const batch = lane.waiting.splice(0)
      const nowMs = Math.max(...batch.map((w) => w.nowMs))
      try {
        const { current, admitted } = await lane.claim(batch.length)
        const after = current.map((c) => c + admitted)
        // remembers every window the batch left exhausted (its own verdict is per request, below)
        decide(true, after, lane.slots, lane.memoKeys, this.#memo, nowMs)
        // fewer admitted than waiting only when a window is full: the first full one refuses the rest
        const refusedBy = lane.slots.findIndex((s, i) => after[i]! >= s.window.limit)
        for (const [i, w] of batch.entries()) w.resolve(i < admitted ? { allowed: true } : rejection(lane.slots[refusedBy]!, w.nowMs))
      } catch (err) {
        for (const w of batch) w.reject(err)
      }
    }
    this.#lanes.delete(laneKey)
  }
}

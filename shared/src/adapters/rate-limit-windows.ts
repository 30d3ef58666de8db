import type { RateLimitDecision, WindowSlot } from '../model/rate-limit-window.ts'

export function rejection(slot: WindowSlot, nowMs: number): RateLimitDecision {
  return { allowed: false, window: slot.window, resetInSeconds: Math.max(1, Math.ceil((slot.endMs - nowMs) / 1000)) }
}

/**
 * "Window W of key K is exhausted until T", per process. An exhausted fixed window stays exhausted
 * until it ends (counts only grow within a window), so a remembered exhaustion lets later requests
 * be refused without a store round trip, and never refuses one that would have been admitted.
 */
export class ExhaustionMemo {
  // a Map, not lru-cache: time is the caller's nowMs, and when full, expired entries go before any live one
  #until = new Map<string, number>()
  #maxEntries: number

  constructor(maxEntries = 10_000) {
    this.#maxEntries = maxEntries
  }

  /** the first window (in the caller's order) known to be exhausted at nowMs */
  firstExhausted(slotKeys: readonly string[], nowMs: number): number {
    for (let i = 0; i < slotKeys.length; i++) {
      const until = this.#until.get(slotKeys[i]!)
      if (until !== undefined && until > nowMs) return i
    }
    return -1
  }

  remember(slotKey: string, untilMs: number, nowMs: number): void {
    if (this.#until.size >= this.#maxEntries) {
      for (const [k, until] of this.#until) if (until <= nowMs) this.#until.delete(k)
      // still full of live entries: forget the oldest (the memo is only a shortcut)
      if (this.#until.size >= this.#maxEntries) this.#until.delete(this.#until.keys().next().value!)
    }
    this.#until.set(slotKey, untilMs)
  }
}

/**
 * The decision from the counts a store transaction saw: `counts` are the stored counts after the
 * request (incremented when admitted, untouched when refused). Remembers every window that is
 * now exhausted.
 */
export function decide(
  admitted: boolean,
  counts: readonly number[],
  slots: readonly WindowSlot[],
  memoKeys: readonly string[],
  memo: ExhaustionMemo,
  nowMs: number,
): RateLimitDecision {
  let refusedBy = -1
  for (let i = 0; i < slots.length; i++) {
    if (counts[i]! < slots[i]!.window.limit) continue
    memo.remember(memoKeys[i]!, slots[i]!.endMs, nowMs)
    if (!admitted && refusedBy < 0) refusedBy = i
  }
  return refusedBy >= 0 ? rejection(slots[refusedBy]!, nowMs) : { allowed: true }
}

/** the memo key of a slot: the limit is part of it, so a changed limit never reuses an old verdict */
export const memoKeyOf = (slotId: string, slot: WindowSlot) => `${slotId}:${slot.window.limit}`

/** A fixed window aligned to multiples of `seconds` since the epoch. */
export interface RateLimitWindow {
  name: string
  limit: number
  seconds: number
}

export type RateLimitDecision =
  | { allowed: true }
  | {
      allowed: false
      /** the first exhausted window */
      window: RateLimitWindow
      /** seconds until that window resets, at least 1 */
      resetInSeconds: number
    }

/** One window of one key at one instant: where it starts and ends (ms since the epoch). */
export interface WindowSlot {
  window: RateLimitWindow
  startMs: number
  endMs: number
}

/** The fixed window containing nowMs: aligned to multiples of `seconds` since the epoch. */
export function slotOf(window: RateLimitWindow, nowMs: number): WindowSlot {
  const lengthMs = window.seconds * 1000
  const startMs = Math.floor(nowMs / lengthMs) * lengthMs
  return { window, startMs, endMs: startMs + lengthMs }
}

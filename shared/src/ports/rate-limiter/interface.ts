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

/**
 * Counts requests per key in fixed windows, shared by every instance of a service.
 * A request is counted in every window only when all windows admit it (a 429 does not count).
 */
export interface RateLimiter {
  consume(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<RateLimitDecision>
  close(): Promise<void>
}

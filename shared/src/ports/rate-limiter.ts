import type { RateLimitDecision, RateLimitWindow } from '../model/rate-limit-window.ts'

/**
 * Counts requests per key in fixed windows, shared by every instance of a service.
 * A request is counted in every window only when all windows admit it (a 429 does not count).
 */
export interface RateLimiter {
  consume(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<RateLimitDecision>
  /** The counts of `key` in the windows containing nowMs (0 for a window not started), counting nothing. */
  peek(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<number[]>
  /**
   * Plain counters beside the windows (the portal's activity counts): adds `by` to each key's
   * count (created at 0), kept until `expireAtMs`. One call is one store write for all keys.
   */
  addCounts(increments: readonly { key: string; by: number }[], expireAtMs: number): Promise<void>
  /** The counts of plain counters (0 for a missing or expired one), in the order of `keys`. */
  readCounts(keys: readonly string[], nowMs: number): Promise<number[]>
  /**
   * Small text documents beside the counters (the portal's push samples, domain/activity/push-sample.ts):
   * `update` gets the current text (null when missing or expired at `nowMs`) and returns the new
   * one, applied atomically (it may run more than once when the store retries), kept until
   * `expireAtMs`. The caller bounds the size.
   */
  updateNote(key: string, update: (current: string | null) => string, expireAtMs: number, nowMs: number): Promise<void>
  /** The texts of notes (null for a missing or expired one), in the order of `keys`. */
  readNotes(keys: readonly string[], nowMs: number): Promise<(string | null)[]>
  close(): Promise<void>
}

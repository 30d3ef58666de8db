/**
 * Plain numeric counters shared by every instance, each kept until its expiry: the endpoint
 * health listener's hourly attempt counts and latest instants (domain/webhooks/listeners/), the
 * queue pool's count of dedicated queues (domain/webhooks/queue-pool.ts). No windows, no
 * admission decision: that is the RateLimiter's job.
 */

/** `add` adds to the count (created at 0); `max` raises it to at least the value (a latest instant). */
export type CounterChange = { key: string; add: number } | { key: string; max: number }

export interface Counters {
  /**
   * Applies every change in one store write, each key kept until `expireAtMs` (a later expiry
   * given for a key keeps it longer). Changes commute: two instances applying at once lose neither.
   */
  apply(changes: readonly CounterChange[], expireAtMs: number): Promise<void>
  /** The values (0 for a missing or expired counter at `nowMs`), in the order of `keys`. */
  read(keys: readonly string[], nowMs: number): Promise<number[]>
  close(): Promise<void>
}

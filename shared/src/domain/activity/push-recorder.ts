import type { PlatformDeps } from '../../ports/deps.ts'
import { dayOf, expiryOf, pushCountKey, pushOutcomeOf } from './counts.ts'

/** How often the counts gathered in memory are written (one write per flush for all keys). */
export const FLUSH_EVERY_MS = 2_000

/**
 * The edge's push counts per account, day and answer status, gathered in memory and written in
 * one batch every FLUSH_EVERY_MS: `record` is a map increment after the answer is sent
 * (onResponse), so counting never delays a 202 nor adds a store write per request. A flush that
 * fails is logged and dropped (activity counts are a view, not a ledger); an instance that
 * stops flushes what it holds when its app closes.
 */
export class PushActivityRecorder {
  #pending = new Map<string, { key: string; by: number; expireAtMs: number }>()
  #timer: NodeJS.Timeout | null = null
  #flushing: Promise<void> = Promise.resolve()
  readonly #deps: Pick<PlatformDeps, 'rateLimiter' | 'clock' | 'logger'>

  constructor(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock' | 'logger'>) {
    this.#deps = deps
  }

  record(accountId: string, status: number): void {
    const day = dayOf(this.#deps.clock.now())
    const key = pushCountKey(accountId, day, pushOutcomeOf(status))
    const entry = this.#pending.get(key)
    if (entry) entry.by++
    else this.#pending.set(key, { key, by: 1, expireAtMs: expiryOf(day) })
    if (!this.#timer) {
      this.#timer = setTimeout(() => {
        this.#timer = null
        void this.flush()
      }, FLUSH_EVERY_MS)
      this.#timer.unref()
    }
  }

  /** Writes what is gathered (grouped by expiry: one store call per day present). */
  flush(): Promise<void> {
    const entries = [...this.#pending.values()]
    this.#pending.clear()
    if (entries.length === 0) return this.#flushing
    const byExpiry = new Map<number, { key: string; by: number }[]>()
    for (const e of entries) byExpiry.set(e.expireAtMs, [...(byExpiry.get(e.expireAtMs) ?? []), { key: e.key, by: e.by }])
    this.#flushing = this.#flushing.then(async () => {
      for (const [expireAtMs, increments] of byExpiry) {
        await this.#deps.rateLimiter.addCounts(increments, expireAtMs).catch((err: unknown) => {
          this.#deps.logger.warn({ err, keys: increments.length }, 'push activity counts not stored')
        })
      }
    })
    return this.#flushing
  }

  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    await this.flush()
  }
}

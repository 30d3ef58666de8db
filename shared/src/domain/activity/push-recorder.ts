import type { PlatformDeps } from '../../ports/deps.ts'
import { dayOf, expiryOf, pushCountKey, pushOutcomeOf } from './counts.ts'
import { addPush, storeSample, type SampleDelta } from './push-sample.ts'
import type { InboundRecord } from '../ingest/mapping.ts'
import type { BatchShape } from '../ingest/push-body.ts'
import type { PushAnswered, PushListener } from '../../ports/listeners.ts'

/** How often the counts gathered in memory are written (one write per flush for all keys). */
const FLUSH_EVERY_MS = 2_000

/**
 * The edge's push counts per account, day and answer status, gathered in memory and written in
 * one batch every FLUSH_EVERY_MS: `record` is a map increment after the answer is sent
 * (onResponse), so counting never delays a 202 nor adds a store write per request. A flush that
 * fails is logged and dropped (activity counts are a view, not a ledger); an instance that
 * stops flushes what it holds when its app closes.
 */
class PushActivityRecorder {
  #pending = new Map<string, { key: string; by: number; expireAtMs: number }>()
  /** per connection: what its accepted pushes added since the last flush (push-sample.ts) */
  #samples = new Map<string, SampleDelta>()
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
    this.#schedule()
  }

  /**
   * An accepted push's records (the parsed body): its first record and key counts, for the
   * portal's mapping screens. Gathered in memory like the counts, one note write per connection
   * per flush.
   */
  sample(connectionId: string, shape: BatchShape, records: readonly InboundRecord[]): void {
    const earlier = this.#samples.get(connectionId)
    const delta = addPush(earlier, this.#deps.clock.now(), shape, records)
    if (!earlier) this.#samples.set(connectionId, delta)
    this.#schedule()
  }

  #schedule(): void {
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
    const samples = [...this.#samples]
    this.#samples.clear()
    if (samples.length > 0) {
      this.#flushing = this.#flushing.then(async () => {
        for (const [connectionId, delta] of samples) {
          await storeSample(this.#deps, connectionId, delta).catch((err: unknown) => {
            this.#deps.logger.warn({ err, connectionId }, 'push sample not stored')
          })
        }
      })
    }
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

/**
 * The portal's activity counts and push samples as a listener of the edge's answers: every
 * answer to a request whose account is known is counted by status; an accepted push's records
 * (as parsed) feed its connection's sample (push-sample.ts).
 *
 * Failure contract: onPushAnswered is a map update and never throws; a failed flush is logged and
 * dropped (activity counts are a view, not a ledger); an instance that stops flushes what it holds
 * when its listeners are flushed (the app's close).
 */
export function pushActivityListener(deps: Pick<PlatformDeps, 'rateLimiter' | 'clock' | 'logger'>): PushListener & { flush(): Promise<void> } {
  const recorder = new PushActivityRecorder(deps)
  return {
    name: 'activity counts and push samples',
    onPushAnswered(o: PushAnswered) {
      if (o.accountId === null) return
      recorder.record(o.accountId, o.status)
      if (o.accepted && o.connection) recorder.sample(o.connection.id, o.accepted.shape, o.accepted.records)
    },
    flush: () => recorder.flush(),
  }
}

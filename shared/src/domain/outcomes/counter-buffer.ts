import type { PlatformDeps } from '../../ports/deps.ts'
import type { CounterChange } from '../../ports/counters.ts'

/**
 * Expiries are rounded up to this grain: the changes of one flush then share a few expiries, so a
 * flush is a few store writes (`apply` takes one expiry per write). Asked for an expiry to the
 * millisecond (the endpoint's latest success, kept 400 days after it), the buffer wrote once per
 * distinct millisecond: one more store write per delivery attempt (a Firestore commit on the
 * endpoint's one counter document, each) instead of one per second. A counter is kept up to this
 * much longer than asked.
 */
export const EXPIRY_GRAIN_MS = 60_000

/**
 * Counter changes gathered in memory and written every `everyMs` (one store write per expiry
 * present, expiries rounded up to EXPIRY_GRAIN_MS), for listeners that count what a hot path
 * did: telling them costs a map update, not a store write. A write that fails is logged and its
 * changes dropped (such counters are views of records kept elsewhere); `flush` writes what is
 * held (the listeners' flush at an app's close). `grainMs` 1 keeps expiries as asked (the
 * control of `npm run bench:counter-writes`).
 */
export function counterBuffer(deps: Pick<PlatformDeps, 'counters' | 'logger'>, what: string, everyMs: number, grainMs = EXPIRY_GRAIN_MS) {
  /** per expiry: the changes by key (adds summed, maxima kept) */
  let pending = new Map<number, Map<string, CounterChange>>()
  let timer: NodeJS.Timeout | null = null
  let flushing: Promise<void> = Promise.resolve()

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer)
    timer = null
    const batches = pending
    pending = new Map()
    if (batches.size === 0) return flushing
    flushing = flushing.then(async () => {
      for (const [expireAtMs, byKey] of batches) {
        await deps.counters.apply([...byKey.values()], expireAtMs).catch((err: unknown) => {
          deps.logger.warn({ err, counters: byKey.size }, `${what} not stored`)
        })
      }
    })
    return flushing
  }

  const gather = (change: CounterChange, asked: number): void => {
    const expireAtMs = Math.ceil(asked / grainMs) * grainMs
    let byKey = pending.get(expireAtMs)
    if (!byKey) pending.set(expireAtMs, (byKey = new Map()))
    const earlier = byKey.get(change.key)
    if (!earlier) byKey.set(change.key, change)
    else if ('add' in change && 'add' in earlier) byKey.set(change.key, { key: change.key, add: earlier.add + change.add })
    else if ('max' in change && 'max' in earlier) byKey.set(change.key, { key: change.key, max: Math.max(earlier.max, change.max) })
    if (!timer) {
      timer = setTimeout(() => void flush(), everyMs)
      timer.unref()
    }
  }

  return { gather, flush }
}

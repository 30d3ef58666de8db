import type { PlatformDeps } from '../../ports/deps.ts'
import type { CounterChange } from '../../ports/counters.ts'

/**
 * Counter changes gathered in memory and written every `everyMs` (one store write per expiry
 * present), for listeners that count what a hot path did: telling them costs a map update, not a
 * store write. A write that fails is logged and its changes dropped (such counters are views of
 * records kept elsewhere); `flush` writes what is held (the listeners' flush at an app's close).
 */
export function counterBuffer(deps: Pick<PlatformDeps, 'counters' | 'logger'>, what: string, everyMs: number) {
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

  const gather = (change: CounterChange, expireAtMs: number): void => {
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

import type { PlatformDeps } from '../../../ports/deps.ts'
import type { CounterChange } from '../../../ports/counters.ts'
import type { DeliveryAttempted, DeliveryListener } from '../../../ports/listeners.ts'
import { healthChanges } from '../endpoint-health.ts'

/** How often the changes gathered in memory are written (one store write per expiry present). */
const FLUSH_EVERY_MS = 1_000

/**
 * Endpoint health (endpoint-health.ts): each attempt to an endpoint adds to its hour's count and
 * raises its latest success or failure, gathered in memory and written every FLUSH_EVERY_MS, so
 * an attempt costs a map update, not a store write.
 *
 * Failure contract: never throws; a write that fails is logged and its changes dropped (health is
 * a view of the delivery log, which keeps every attempt), and what an instance holds when it stops
 * is written when its listeners are flushed (the app's close). At most FLUSH_EVERY_MS late.
 */
export function healthCountersListener(deps: Pick<PlatformDeps, 'counters' | 'logger'>): DeliveryListener & { flush(): Promise<void> } {
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
          deps.logger.warn({ err, counters: byKey.size }, 'endpoint health counters not stored')
        })
      }
    })
    return flushing
  }

  const gather = (change: CounterChange, expireAtMs: number) => {
    let byKey = pending.get(expireAtMs)
    if (!byKey) pending.set(expireAtMs, (byKey = new Map()))
    const earlier = byKey.get(change.key)
    if (!earlier) byKey.set(change.key, change)
    else if ('add' in change && 'add' in earlier) byKey.set(change.key, { key: change.key, add: earlier.add + change.add })
    else if ('max' in change && 'max' in earlier) byKey.set(change.key, { key: change.key, max: Math.max(earlier.max, change.max) })
  }

  return {
    name: 'endpoint health counters',
    onDeliveryAttempted(o: DeliveryAttempted) {
      for (const { changes, expireAtMs } of healthChanges(o.delivery.integration_id, Date.parse(o.attempt.at), o.attempt.status_code === 200)) {
        for (const change of changes) gather(change, expireAtMs)
      }
      if (!timer) {
        timer = setTimeout(() => void flush(), FLUSH_EVERY_MS)
        timer.unref()
      }
    },
    flush,
  }
}

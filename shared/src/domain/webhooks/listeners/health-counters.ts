import type { PlatformDeps } from '../../../ports/deps.ts'
import type { DeliveryAttempted, DeliveryListener } from '../../../ports/listeners.ts'
import { healthChanges } from '../endpoint-health.ts'
import { counterBuffer } from '../../outcomes/counter-buffer.ts'

/**
 * Endpoint health (endpoint-health.ts): each attempt adds to its endpoint's hour count and raises
 * its latest success or failure, gathered in memory and written every second.
 *
 * Failure contract: never throws; a write that fails is logged and its changes dropped (health is
 * a view of the delivery log, which keeps every attempt); what an instance holds when it stops is
 * written when its listeners are flushed (the app's close). The figures are at most a second late.
 */
export function healthCountersListener(deps: Pick<PlatformDeps, 'counters' | 'logger'>): DeliveryListener & { flush(): Promise<void> } {
  const buffer = counterBuffer(deps, 'endpoint health counters', 1_000)
  return {
    name: 'endpoint health counters',
    onDeliveryAttempted(o: DeliveryAttempted) {
      for (const { changes, expireAtMs } of healthChanges(o.delivery.integration_id, Date.parse(o.attempt.at), o.attempt.status_code === 200)) {
        for (const change of changes) buffer.gather(change, expireAtMs)
      }
    },
    flush: buffer.flush,
  }
}

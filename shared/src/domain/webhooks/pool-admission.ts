import { LRUCache } from 'lru-cache'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { DeliveryJob } from '../../contract/messages.ts'
import { slotOf } from '../../model/rate-limit-window.ts'
import { taskNameFor } from './deliveries.ts'
import { isPoolQueue } from './queue-pool.ts'
import { endpointRateKey, endpointRateWindow } from './rate-limit.ts'

/**
 * How far ahead (in the endpoint's rate windows) a task over the rate looks for a window with
 * room: beyond it the task comes back uncounted and looks again (a backlog of more than this
 * many windows' worth of one endpoint's deliveries)
 */
const LOOKAHEAD_WINDOWS = 120
/** per process: the earliest window found with room, per endpoint (windows before it were full); the most recently used kept */
const nextFree = new LRUCache<string, number>({ max: 10_000 })

export type AdmissionDeps = Pick<PlatformDeps, 'tasks' | 'deliveries' | 'tenantLookups' | 'rateLimiter' | 'clock' | 'logger'> & {
  config: Pick<PlatformDeps['config'], 'webhookEndpointRate'>
}

/**
 * On a shared (pool) queue the queue runs at the pool's rate, so the dispatcher holds each
 * endpoint to its own (`delivery_rate`, else WEBHOOK_ENDPOINT_RATE) in the shared rate limiter
 * store, counted by every instance. A task within the rate runs now. One over it is not run and
 * is no attempt (the delivery record does not change): it is put back on the same queue at the
 * start of the first window with room, already counted there (`rate_slot`), so it runs then
 * without asking again and no later task can take its place: each delivery waits only for the
 * ones before it. True when the task was put back.
 */
export async function holdForEndpointRate(deps: AdmissionDeps, job: DeliveryJob, queue: string): Promise<boolean> {
  if (!isPoolQueue(queue) || job.rate_slot !== undefined) return false
  const delivery = await deps.deliveries.get(job.delivery_id)
  if (!delivery) return false // stale: runDeliveryJob says so
  const integration = await deps.tenantLookups.getIntegration(delivery.integration_id)
  const window = endpointRateWindow(integration?.delivery_rate ?? deps.config.webhookEndpointRate)
  const key = endpointRateKey(delivery.integration_id)
  const now = deps.clock.now()
  let at = Math.max(now, nextFree.get(key) ?? now)
  for (let i = 0; i < LOOKAHEAD_WINDOWS; i++, at = slotOf(window, at).endMs) {
    const decision = await deps.rateLimiter.consume(key, [window], at)
    if (!decision.allowed) continue
    const slot = slotOf(window, at)
    nextFree.set(key, slot.startMs)
    if (slot.startMs <= now) return false
    await putBack(deps, job, queue, slot.startMs, slot.startMs)
    return true
  }
  // every window looked at is full: come back then and look again, counted nowhere yet
  nextFree.set(key, at)
  await putBack(deps, job, queue, at, undefined)
  return true
}

/**
 * The same job on the same queue at `atMs`. The name is the attempt's with the instant, so a
 * Cloud Tasks retry of this dispatch (the answer lost) puts back the same task, not a second one.
 */
async function putBack(deps: AdmissionDeps, job: DeliveryJob, queue: string, atMs: number, slot: number | undefined): Promise<void> {
  const payload: DeliveryJob = { ...job, ...(slot === undefined ? {} : { rate_slot: slot }) }
  await deps.tasks.enqueue({
    queue,
    name: `${taskNameFor(job.delivery_id, job.seq, job.attempt)}-at${atMs}`,
    payload: Buffer.from(JSON.stringify(payload)),
    scheduleAt: new Date(atMs),
  })
  deps.logger.debug(
    { event: 'delivery_deferred', deliveryId: job.delivery_id, queue, at: new Date(atMs).toISOString(), counted: slot !== undefined },
    'over the endpoint rate: deferred',
  )
}

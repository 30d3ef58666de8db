import type { DeliveryQueueFellBack, ListenerContext, QueueFallbackListener } from '../../ports/listeners.ts'
import { emitOperationalEvent, type OperationsDeps } from './emit.ts'

/**
 * `queue.created_late`: an endpoint's new task queue took no tasks yet, so its deliveries use a
 * pool queue meanwhile (domain/webhooks/queue-pool.ts). Logged, and sent to the operator keyed on
 * the queue, so every instance that meets it late sends the same event id and the operator gets
 * one delivery.
 *
 * Failure contract: never throws; a lost report is logged (the tenant's delivery is on the pool
 * queue already and must not fail for it).
 */
export function queueLateListener(deps: OperationsDeps): QueueFallbackListener {
  return {
    name: 'queue.created_late event',
    async onDeliveryQueueFellBack(o: DeliveryQueueFellBack, ctx: ListenerContext) {
      ctx.logger.warn(
        { event: 'queue.created_late', queue: o.queue, integrationId: o.integrationId, pool: o.poolQueue },
        "an endpoint's new task queue does not take tasks yet: its deliveries use a pool queue meanwhile",
      )
      try {
        await emitOperationalEvent(
          deps,
          { type: 'queue.created_late', occurred_at: o.at, data: { queue: o.queue, integration_id: o.integrationId, pool_queue: o.poolQueue } },
          { key: o.queue },
        )
      } catch (err) {
        ctx.logger.error({ err, queue: o.queue }, 'queue.created_late not sent')
      }
    },
  }
}

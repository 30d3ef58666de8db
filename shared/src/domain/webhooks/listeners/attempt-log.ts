import type { DeliveryAttempted, DeliveryListener, ListenerContext } from '../../../ports/listeners.ts'
import { activeTraceId } from '../../../logging/trace-propagation.ts'

/**
 * One log line per attempt, whatever its outcome (`event: "webhook_delivery"`): what the
 * log-based metrics webhook_delivery_attempts, webhook_delivery_latency and
 * webhook_endpoints_disabled count (infra/log-metrics.tf), and what an operator searches. Ids,
 * attempt, status and the transport error only: never the endpoint URL (it may carry the
 * receiver's own credentials), a secret or a body.
 *
 * Failure contract: a synchronous log write; it cannot fail the attempt, which is recorded
 * before any listener is told.
 */
export const attemptLogListener: DeliveryListener = {
  name: 'delivery attempt log line',
  onDeliveryAttempted(o: DeliveryAttempted, ctx: ListenerContext) {
    const { delivery, attempt } = o
    const line = {
      event: 'webhook_delivery',
      outcome: o.outcome,
      deliveryId: delivery.id,
      integrationId: delivery.integration_id,
      accountId: delivery.account_id,
      eventId: delivery.event_id,
      attempt: attempt.attempt,
      maxAttempts: o.maxAttempts,
      statusCode: attempt.status_code,
      error: attempt.error,
      latencyMs: attempt.latency_ms,
      ...(o.outcome === 'retrying' && delivery.next_attempt_at ? { nextAttemptAt: delivery.next_attempt_at } : {}),
      // the attempt's trace (the visit's, carried by the task) in plain sight, also where no project names it for Cloud Logging
      traceId: activeTraceId(),
    }
    if (o.outcome === 'succeeded') ctx.logger.info(line, 'webhook delivered')
    else if (o.outcome === 'retrying') ctx.logger.warn(line, 'webhook delivery failed: retry scheduled')
    else if (o.outcome === 'disabled') ctx.logger.warn(line, 'integration disabled: endpoint answered 410')
    else ctx.logger.error(line, 'webhook delivery failed: giving up')
  },
}

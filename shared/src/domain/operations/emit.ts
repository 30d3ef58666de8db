import { createHash } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import { OperationalEvent, type NewOperationalEvent } from '../../contract/operational-event.ts'
import { messageCheck } from '../../contract/message-check.ts'
import { canonicalJson } from '../../contract/canonical-json.ts'
import { createDelivery, type EnqueueDeps } from '../webhooks/deliveries.ts'
import { OPERATOR_ACCOUNT_ID, OPERATOR_INTEGRATION_ID } from './operator-ids.ts'
import { redactText } from '../../logging/redact.ts'

export type OperationsDeps = EnqueueDeps & Pick<PlatformDeps, 'deliveries' | 'config' | 'logger'>

const checkEvent = messageCheck(OperationalEvent)

/**
 * The event's id: a hash of its type and `key`, by default its `data` (canonical JSON). The same
 * observation made twice (a retried task, two instances seeing one dead letter) is the same id,
 * hence the same delivery (deliveryIdFor is deterministic too) and one POST: the receiver also
 * dedupes on `webhook-id`.
 */
function operationalEventId(type: string, key: string): string {
  return `opev_${createHash('sha256').update(`${type}\u0000${key}`).digest('base64url').slice(0, 32)}`
}

/**
 * Sends an operational event to the operator (issue 23; docs/operations.md, "Operational
 * events"): checked against its schema, logged (`event: "operational_event"`, so log-based
 * metrics and alerts see it whether or not a URL is set), then, when OPERATOR_EVENTS_URL is set,
 * delivered through the webhook delivery machinery as a Standard-Webhooks-signed POST with its
 * retry schedule (target.ts). Returns the event as sent, or null when it was only logged.
 * Throws only when the store or the scheduler does (the caller's task is then retried, and the
 * id keeps the retry from sending twice).
 */
/** Every text of the event's data through the redaction policy (an endpoint's last error can name its URL). */
function redactedData<T>(value: T): T {
  if (typeof value === 'string') return redactText(value) as T
  if (Array.isArray(value)) return value.map(redactedData) as T
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactedData(v)])) as T
  return value
}

export async function emitOperationalEvent(deps: OperationsDeps, raw: NewOperationalEvent, options: { key?: string } = {}): Promise<OperationalEvent | null> {
  // the one write seam of operational events: the log line and the signed POST both carry this
  const event = { ...raw, data: redactedData(raw.data) } as NewOperationalEvent
  const withId = { id: operationalEventId(event.type, options.key ?? canonicalJson(event.data)), ...event }
  const checked = checkEvent(withId)
  if (!checked.ok) {
    // a bug of the caller, never worth failing its work for
    deps.logger.error({ event: 'operational_event_invalid', type: event.type, reason: checked.reason }, 'operational event not sent: invalid')
    return null
  }
  const sent = checked.value
  deps.logger.warn({ event: 'operational_event', type: sent.type, eventId: sent.id, data: sent.data }, `operational event ${sent.type}`)
  if (!deps.config.operatorEventsUrl) return null
  await createDelivery(deps, {
    accountId: OPERATOR_ACCOUNT_ID,
    integrationId: OPERATOR_INTEGRATION_ID,
    eventId: sent.id,
    body: JSON.stringify(sent),
    now: new Date(deps.clock.now()).toISOString(),
  })
  return sent
}

import type { QueueMessage, HandlerResult } from '../../ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES as A, type Topic } from '../../model/topics.ts'
import { emitOperationalEvent, type OperationsDeps } from './emit.ts'

/** a Pub/Sub subscription or message id: letters, digits and a few separators, never free text */
const NAME = /^[A-Za-z0-9._~%+:@/-]{1,256}$/
const ACCOUNT = /^[A-Za-z0-9_-]{1,256}$/

const nameOr = (value: string | undefined, fallback: string | null): string | null => (value !== undefined && NAME.test(value) ? value : fallback)
const count = (value: string | undefined): number | null => {
  if (value === undefined || !/^\d{1,9}$/.test(value)) return null
  return Number(value)
}

/**
 * What `batch.dead_lettered` says about one dead letter, from its attributes alone (the body is
 * never read or decoded: a dead letter is whatever could not be processed, up to 10 MB, and
 * reporting it must stay bounded). `subscription`: Pub/Sub's source subscription when its
 * dead-letter policy forwarded the message, else the source topic (the consumer parked it
 * itself). `message_id`: the original message when the attributes name it, else the dead letter
 * as the inspection subscription holds it.
 */
function deadLetterFacts(topic: Topic, message: Pick<QueueMessage, 'id' | 'attributes'>) {
  const attrs = message.attributes
  const reason = attrs[A.reason]
  return {
    subscription: nameOr(attrs[A.sourceSubscription], topic)!,
    message_id: nameOr(attrs[A.originalMessageId], null) ?? message.id.slice(0, 256),
    account_id: attrs.account_id !== undefined && ACCOUNT.test(attrs.account_id) ? attrs.account_id : null,
    delivery_attempts: count(attrs[A.sourceDeliveryCount]) ?? count(attrs[A.attempts]),
    // free text of our own making (handle-batch.ts), cut to the schema's bound all the same
    reason: reason === undefined ? null : reason.slice(0, 200),
  }
}

/**
 * The consumer of a dead-letter topic's alerts subscription (the webhook-dispatcher: its push
 * route in Google Cloud, a pull consumer locally): tells the operator once per dead letter, then
 * acks. The event id is keyed on the topic and the message id, so a redelivered dead letter (or
 * two instances seeing it) is one delivery and one POST. Nack only when the event could not be
 * stored or scheduled: the alerts subscription retries it.
 */
export function createDeadLetterHandler(deps: OperationsDeps, topic: Topic): (message: QueueMessage) => Promise<HandlerResult> {
  return async (message) => {
    const data = deadLetterFacts(topic, message)
    await emitOperationalEvent(
      deps,
      { type: 'batch.dead_lettered', occurred_at: new Date(deps.clock.now()).toISOString(), data },
      { key: `${topic}\u0000${data.message_id}` },
    )
    return 'ack'
  }
}

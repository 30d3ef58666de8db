/** Topics of the platform. Each has a dead-letter topic `<topic>-dead-letter`. */
export type Topic = 'contact-batches' | 'visit-events' | 'contact-changes'
/** every topic of the platform: the embedded queue declares the dead-letter subscription of each */
export const TOPICS: readonly Topic[] = ['contact-batches', 'visit-events', 'contact-changes']

export function deadLetterTopicOf(topic: Topic): string {
  return `${topic}-dead-letter`
}

/**
 * Topics that have a subscription from the start, as deployed (infra/pubsub.tf: the push
 * subscriptions of contact-batches and visit-events). `contact-changes` is read only by a
 * BigQuery subscription in Google Cloud; with the embedded queue or the emulator nothing reads
 * it, so nothing keeps it. Every dead-letter topic has a subscription too (`<topic>-dead-letter-sub`).
 */
export const SUBSCRIBED_TOPICS: readonly Topic[] = ['contact-batches', 'visit-events']

/**
 * The second subscription of every dead-letter topic, next to `<topic>-dead-letter-sub` (kept for
 * inspection and replay; a topic gives each subscription every message): the webhook-dispatcher
 * consumes it and tells the operator (`batch.dead_lettered`, domain/operations/dead-letter.ts).
 * infra/pubsub.tf pushes it to DEAD_LETTER_PUSH_PATH; the embedded queue keeps it as its own rows.
 */
export function deadLetterAlertsOf(topic: Topic): string {
  return `${deadLetterTopicOf(topic)}-alerts`
}

/** the dispatcher's push route of a dead-letter topic's alerts subscription */
export function deadLetterPushPath(topic: Topic): string {
  return `/pubsub/${deadLetterTopicOf(topic)}`
}

/**
 * Attributes a dead letter carries. Pub/Sub adds the CloudPubSubDeadLetter* ones when its
 * dead-letter policy forwards a message (cloud.google.com/pubsub/docs/handling-failures); the
 * adapters that dead-letter themselves (embedded queue, the Pub/Sub adapter's pull path, the
 * start:cloud push relay) add the same. A consumer that parks a message itself (the upsert
 * worker) adds the `x-` ones: the original message id, its attempt and why.
 */
export const DEAD_LETTER_ATTRIBUTES = {
  sourceSubscription: 'CloudPubSubDeadLetterSourceSubscription',
  sourceDeliveryCount: 'CloudPubSubDeadLetterSourceDeliveryCount',
  attempts: 'x-delivery-attempts',
  originalMessageId: 'x-original-message-id',
  reason: 'x-dead-letter-reason',
} as const

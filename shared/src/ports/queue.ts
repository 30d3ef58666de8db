import type { Topic } from '../model/topics.ts'

export interface QueueMessage {
  id: string
  data: Buffer
  attributes: Record<string, string>
  /** 1 on the first delivery */
  deliveryAttempt: number
  publishedAt: string
}

export type HandlerResult = 'ack' | 'nack'
export type MessageHandler = (message: QueueMessage) => Promise<HandlerResult>

export interface SubscribeOptions {
  /** concurrent messages in flight for this subscriber */
  maxInFlight?: number
  /** after this many deliveries a nacked message goes to the dead-letter topic (default 5) */
  maxDeliveryAttempts?: number
}

export interface Subscription {
  close(): Promise<void>
}

/**
 * At-least-once messaging with Pub/Sub's semantics. `publish` resolves only once the message is
 * durable (embedded: fsynced to disk; Pub/Sub: acknowledged by the service) and rejects otherwise.
 * A message is kept for the subscriptions its topic has when it is published: one published to a
 * topic without a subscription is dropped, and a subscription created later never sees it.
 * `subscribe` attaches a consumer to the topic's one subscription (consumers of one topic share
 * its messages), creating the subscription when the adapter may (embedded, emulator). A kept
 * message is removed once acknowledged, or after the retention period (7 days, as
 * `message_retention_duration` in infra/pubsub.tf) if nobody acknowledges it. A handler that
 * throws counts as a nack.
 */
export interface Queue {
  publish(topic: Topic, data: Buffer, attributes?: Record<string, string>): Promise<string>
  subscribe(topic: Topic, handler: MessageHandler, options?: SubscribeOptions): Promise<Subscription>
  /**
   * Attaches a consumer to the second subscription of `topic`'s dead-letter topic,
   * `<topic>-dead-letter-alerts` (model/topics.ts deadLetterAlertsOf): every message that lands
   * on `<topic>-dead-letter`, forwarded after its delivery attempts or published there by a
   * consumer, reaches it at least once with the CloudPubSubDeadLetter* attributes where the
   * forwarding adds them, while `<topic>-dead-letter-sub` keeps its own copy for inspection and
   * replay. The subscription exists from the start (embedded, emulator; Terraform in Google
   * Cloud). A nacked dead letter comes back after a backoff; dead letters are never dead-lettered.
   */
  subscribeDeadLetters(topic: Topic, handler: MessageHandler, options?: Pick<SubscribeOptions, 'maxInFlight'>): Promise<Subscription>
  /**
   * Whether this adapter can publish and its subscribers can receive, from state it already has
   * (no call to a service): /readyz asks it. Adapters that cannot tell leave it out.
   */
  health?(): { ok: boolean; reason?: string }
  /**
   * One round trip to the queue service, for /readyz's background check (once per interval, never
   * per request): resolves when the service answered, rejects when it cannot be reached. Adapters
   * with nothing remote to reach leave it out.
   */
  ping?(): Promise<void>
  close(): Promise<void>
}

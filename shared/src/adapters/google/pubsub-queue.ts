import type { PubSub } from '@google-cloud/pubsub'
import type { Logger } from 'pino'
import type { MessageHandler, Queue, SubscribeOptions, Subscription } from '../../ports/queue.ts'
import { deadLetterAlertsOf, deadLetterTopicOf, SUBSCRIBED_TOPICS, type Topic } from '../../model/topics.ts'
import { isServiceAnswer } from './grpc-codes.ts'
import { withTraceparent } from '../../logging/trace-propagation.ts'
import { startPubSubConsumer } from './pubsub-consumer.ts'
import { pubsubTopics } from './pubsub-topics.ts'

export interface PubSubQueueOptions {
  logger: Logger
  /** create missing topics and subscriptions (emulator and dev; production Terraform creates them) */
  createMissing?: boolean
  /**
   * with createMissing: topics whose subscription is created with the topic, so messages
   * published before a consumer attaches are kept, as with Terraform's (default SUBSCRIBED_TOPICS;
   * dead-letter topics always). Other topics get theirs when subscribed to: until then their
   * messages are dropped, as Pub/Sub drops messages of a topic without a subscription.
   */
  subscriptions?: readonly string[]
  /** the pull subscription of topic T is `T-<suffix>` (default `sub`) */
  subscriptionSuffix?: string
  /** prepended to every topic and subscription name, so tests sharing one emulator stay isolated */
  namePrefix?: string
  /**
   * longest a publish may take, retries included, before it rejects (default 15 s; the client's
   * own default retries for 10 minutes, far past any producer's request)
   */
  publishTimeoutMs?: number
}

/** the readiness round trip gives up after this (readiness.ts counts a check slower than its own timeout as failed anyway) */
const PING_TIMEOUT_MS = 5_000

/**
 * The queue on Google Cloud Pub/Sub (or its emulator).
 *
 * Publishing: one `Topic` object per topic with batching tuned for latency (pubsub-topics.ts), and `publishMessage` resolves with the id only once the
 * service acknowledged, so a producer can answer 503 when it rejects.
 *
 * Subscribing (streaming pull on `<topic>-<suffix>`, pubsub-consumer.ts): flow control caps
 * messages in flight at maxInFlight; the client library extends the ack deadline of every message
 * it holds on its own, so a long handler is not redelivered mid-way.
 *
 * Dead-lettering is done here, not by a subscription dead-letter policy (which the emulator lacks
 * and which hides the attempt count without one): the attempt is `message.deliveryAttempt` when
 * the service counts it, otherwise this process's own count of deliveries of that message id.
 * When a nacked message reaches maxDeliveryAttempts it is published to `<topic>-dead-letter` and
 * acked. The local count undercounts when redeliveries land on other instances, so a poison
 * message may get a few more attempts there; in production the subscription's dead-letter policy
 * enables `deliveryAttempt` and the count is exact.
 */
export function createPubSubQueue(pubsub: PubSub, options: PubSubQueueOptions): Queue {
  const { logger } = options
  const prefix = options.namePrefix ?? ''
  const subscriptions = new Set<{ close(): Promise<void> }>()
  let closed = false
  const { topicName, subscriptionName, ensure, topicFor, flush } = pubsubTopics(pubsub, {
    prefix,
    suffix: options.subscriptionSuffix ?? 'sub',
    createMissing: options.createMissing ?? false,
    subscriptions: options.subscriptions,
    publishTimeoutMs: options.publishTimeoutMs ?? 15_000,
  })

  async function publishTo(name: string, data: Buffer, attributes: Record<string, string>): Promise<string> {
    if (closed) throw new Error('queue closed')
    await ensure(name.endsWith('-dead-letter') ? name.slice(0, -'-dead-letter'.length) : name)
    // our `traceparent`; with the client's tracing on it adds `googclient_traceparent` (its publish span)
    return topicFor(name).publishMessage({ data, attributes: withTraceparent(attributes) })
  }

  const queue: Queue = {
    publish(topic, data, attributes = {}) {
      return publishTo(topic, data, attributes)
    },
    /**
     * GetTopic on a topic: any answer of the service means it is reachable, a refusal included
     * (PERMISSION_DENIED where the service account holds only roles/pubsub.publisher, which has
     * no pubsub.topics.get; NOT_FOUND for a topic not created yet). A dead emulator or an
     * unreachable endpoint rejects with UNAVAILABLE at once.
     */
    async ping() {
      try {
        await pubsub.topic(topicName(SUBSCRIBED_TOPICS[0]!)).getMetadata({ timeout: PING_TIMEOUT_MS })
      } catch (err) {
        if (!isServiceAnswer(err)) throw err
      }
    },

    async subscribe(topic: Topic, handler: MessageHandler, subscribeOptions: SubscribeOptions = {}): Promise<Subscription> {
      if (closed) throw new Error('queue closed')
      await ensure(topic, true)
      return consume(topic, subscriptionName(topic), handler, subscribeOptions, deadLetterTopicOf(topic))
    },

    async subscribeDeadLetters(topic: Topic, handler: MessageHandler, subscribeOptions = {}): Promise<Subscription> {
      if (closed) throw new Error('queue closed')
      await ensure(topic)
      // never dead-lettered: a dead letter the handler cannot take comes back until it can
      const alerts = deadLetterAlertsOf(topic)
      return consume(alerts, `${prefix}${alerts}`, handler, { ...subscribeOptions, maxDeliveryAttempts: Number.POSITIVE_INFINITY }, null)
    },

    async close() {
      if (closed) return
      closed = true
      await Promise.all([...subscriptions].map((s) => s.close()))
      await flush()
    },
  }

  /** Streaming pull on one subscription (pubsub-consumer.ts), closed with the adapter. */
  function consume(topic: string, name: string, handler: MessageHandler, subscribeOptions: SubscribeOptions, deadLetterTo: string | null): Subscription {
    const consumer = startPubSubConsumer(pubsub, { logger, topic, name, handler, subscribeOptions, deadLetterTo, publish: publishTo })
    const handle = {
      async close() {
        await consumer.close()
        subscriptions.delete(handle)
      },
    }
    subscriptions.add(handle)
    return handle
  }
  return queue
}

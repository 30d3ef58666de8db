import { Duration, type Message, type PubSub, type Topic as PubSubTopic } from '@google-cloud/pubsub'
import type { Logger } from 'pino'
import type { MessageHandler, Queue, QueueMessage, SubscribeOptions, Subscription } from '../../ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES, deadLetterAlertsOf, deadLetterTopicOf, SUBSCRIBED_TOPICS, type Topic } from '../../model/topics.ts'
import { isAlreadyExists, isServiceAnswer } from './grpc-codes.ts'
import { inMessageSpan, withTraceparent } from '../../logging/trace-propagation.ts'

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

const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5
/** the readiness round trip gives up after this (readiness.ts counts a check slower than its own timeout as failed anyway) */
const PING_TIMEOUT_MS = 5_000
/**
 * Bytes the client gathers into one publish request. Pub/Sub caps a request (and a message) at
 * 10 MB; staying below leaves room for attributes and framing. A larger single message (up to
 * the 10 MB message limit) is not refused by this setting: it is sent in a request of its own.
 */
const BATCH_MAX_BYTES = 8 * 1024 * 1024
/** attribute the adapter adds to a dead letter: how many deliveries it had */
export const DEAD_LETTER_ATTEMPTS_ATTRIBUTE = DEAD_LETTER_ATTRIBUTES.attempts
/** attribute the adapter adds to a dead letter: the original message id */
export const DEAD_LETTER_SOURCE_ID_ATTRIBUTE = DEAD_LETTER_ATTRIBUTES.originalMessageId

/**
 * The queue on Google Cloud Pub/Sub (or its emulator).
 *
 * Publishing: one `Topic` object per topic with batching tuned for latency (a few ms, not the
 * client's 10 ms default with a 1 MB cap), and `publishMessage` resolves with the id only once the
 * service acknowledged, so a producer can answer 503 when it rejects.
 *
 * Subscribing (streaming pull on `<topic>-<suffix>`): flow control caps messages in flight at
 * maxInFlight; the client library extends the ack deadline of every message it holds on its own
 * (lease management, `maxExtensionTime` 10 minutes), so a long handler is not redelivered mid-way.
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
  const suffix = options.subscriptionSuffix ?? 'sub'
  const topics = new Map<string, PubSubTopic>()
  const ensured = new Map<string, Promise<void>>()
  const subscriptions = new Set<{ close(): Promise<void> }>()
  let closed = false

  const topicName = (name: string) => `${prefix}${name}`
  const subscriptionName = (name: string) => `${prefix}${name}-${suffix}`

  function topicFor(name: string): PubSubTopic {
    let topic = topics.get(name)
    if (!topic) {
      topic = pubsub.topic(topicName(name), {
        batching: { maxMessages: 100, maxMilliseconds: 5, maxBytes: BATCH_MAX_BYTES },
        gaxOpts: { timeout: options.publishTimeoutMs ?? 15_000 },
      })
      topics.set(name, topic)
    }
    return topic
  }

  async function createIgnoringExisting(create: () => Promise<unknown>): Promise<void> {
    try {
      await create()
    } catch (err) {
      if (!isAlreadyExists(err)) throw err
    }
  }

  const declared = new Set(options.subscriptions ?? SUBSCRIBED_TOPICS)
  /**
   * With createMissing: the topic and the dead-letter topic with a subscription that keeps dead
   * letters; the topic's own subscription when it is declared or `subscribing`.
   */
  function ensure(name: string, subscribing = false): Promise<void> {
    if (!options.createMissing) return Promise.resolve()
    const withSubscription = subscribing || declared.has(name)
    const key = `${name}\u0000${withSubscription}`
    let p = ensured.get(key)
    if (!p) {
      p = (async () => {
        await createIgnoringExisting(() => pubsub.createTopic(topicName(name)))
        if (withSubscription) await createIgnoringExisting(() => pubsub.topic(topicName(name)).createSubscription(subscriptionName(name)))
        const dead = `${name}-dead-letter`
        await createIgnoringExisting(() => pubsub.createTopic(topicName(dead)))
        await createIgnoringExisting(() => pubsub.topic(topicName(dead)).createSubscription(subscriptionName(dead)))
        // the dead letters' second subscription (the operator's alerts), named as infra/pubsub.tf names it
        await createIgnoringExisting(() => pubsub.topic(topicName(dead)).createSubscription(`${prefix}${name}-dead-letter-alerts`))
      })()
      p.catch(() => ensured.delete(key))
      ensured.set(key, p)
    }
    return p
  }

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
      await Promise.all([...topics.values()].map((t) => t.flush().catch(() => {})))
    },
  }

  /**
   * Streaming pull on one subscription; `topic` names it in logs and spans. A nacked message
   * that reached maxDeliveryAttempts is published to `deadLetterTo` (null: never).
   */
  async function consume(
    topic: string,
    name: string,
    handler: MessageHandler,
    subscribeOptions: SubscribeOptions,
    deadLetterTo: string | null,
  ): Promise<Subscription> {
    const maxInFlight = Math.max(1, subscribeOptions.maxInFlight ?? 10)
    const maxAttempts = Math.max(1, subscribeOptions.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS)
    const subscription = pubsub.subscription(name, {
      flowControl: { maxMessages: maxInFlight, allowExcessMessages: false },
      maxExtensionTime: Duration.from({ minutes: 10 }),
    })
    /** deliveries of each message id seen by this subscriber (see the adapter comment) */
    const seen = new Map<string, number>()
    const inFlight = new Set<Promise<void>>()

    const attemptOf = (message: Message) => {
      const local = (seen.get(message.id) ?? 0) + 1
      seen.delete(message.id) // re-insert: the map stays in recency order for trimming
      seen.set(message.id, local)
      if (seen.size > 10_000) seen.delete(seen.keys().next().value!)
      return Math.max(message.deliveryAttempt || 0, local)
    }

    const handleMessage = async (message: Message) => {
      const attempt = attemptOf(message)
      const queueMessage: QueueMessage = {
        id: message.id,
        data: message.data,
        attributes: { ...message.attributes },
        deliveryAttempt: attempt,
        publishedAt: message.publishTime.toISOString(),
      }
      let result: 'ack' | 'nack'
      try {
        result = (await inMessageSpan(topic, queueMessage, () => handler(queueMessage))) === 'ack' ? 'ack' : 'nack'
      } catch (err) {
        logger.error({ err, topic, messageId: message.id, attempt }, 'message handler failed')
        result = 'nack'
      }
      if (result === 'ack') {
        seen.delete(message.id)
        message.ack()
        return
      }
      if (deadLetterTo && attempt >= maxAttempts) {
        try {
          await publishTo(deadLetterTo, message.data, {
            ...message.attributes,
            [DEAD_LETTER_ATTEMPTS_ATTRIBUTE]: String(attempt),
            [DEAD_LETTER_SOURCE_ID_ATTRIBUTE]: message.id,
            // what Pub/Sub's dead-letter policy adds, so a dead letter reads the same either way
            [DEAD_LETTER_ATTRIBUTES.sourceSubscription]: name,
            [DEAD_LETTER_ATTRIBUTES.sourceDeliveryCount]: String(attempt),
          })
          seen.delete(message.id)
          message.ack()
          logger.warn({ topic, messageId: message.id, attempt }, 'message moved to dead-letter topic')
        } catch (err) {
          logger.error({ err, topic, messageId: message.id }, 'dead-lettering failed; message will be redelivered')
          message.nack()
        }
        return
      }
      message.nack()
    }

    let stopping = false
    subscription.on('message', (message: Message) => {
      // while closing, hand new arrivals straight back; the listener stays so acks of running handlers still flow
      if (stopping) return void message.nack()
      const p: Promise<void> = handleMessage(message).finally(() => inFlight.delete(p))
      inFlight.add(p)
    })
    subscription.on('error', (err: unknown) => logger.error({ err, topic }, 'pubsub subscription error'))

    const handle = {
      async close() {
        if (stopping) return
        stopping = true
        while (inFlight.size > 0) await Promise.allSettled([...inFlight])
        await subscription.close()
        subscriptions.delete(handle)
      },
    }
    subscriptions.add(handle)
    return handle
  }
  return queue
}

import { Duration, type Message, type PubSub } from '@google-cloud/pubsub'
import { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import type { MessageHandler, QueueMessage, SubscribeOptions } from '../../ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES } from '../../model/topics.ts'
import { inMessageSpan } from '../../logging/trace-propagation.ts'

const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5
/** message ids whose deliveries a subscriber counts, the most recently seen (the count is a fallback: see the adapter) */
const SEEN_KEPT = 10_000

interface PubSubConsumerOptions {
  logger: Logger
  /** names the subscription in logs and spans */
  topic: string
  /** the subscription's full name */
  name: string
  handler: MessageHandler
  subscribeOptions: SubscribeOptions
  /** where a nacked message that reached maxDeliveryAttempts is published (null: never) */
  deadLetterTo: string | null
  /** the adapter's publish (refused once the adapter is closed) */
  publish(topic: string, data: Buffer, attributes: Record<string, string>): Promise<string>
}

/**
 * Streaming pull on one subscription: flow control caps messages in flight at maxInFlight; the
 * client library extends the ack deadline of every message it holds on its own (lease management,
 * `maxExtensionTime` 10 minutes), so a long handler is not redelivered mid-way. A nacked message
 * that reached maxDeliveryAttempts is published to `deadLetterTo` and acked (pubsub-queue.ts says
 * why here). `close` hands new arrivals back and resolves once the handlers under way are done.
 */
export function startPubSubConsumer(pubsub: PubSub, options: PubSubConsumerOptions): { close(): Promise<void> } {
  const { logger, topic, name, handler, deadLetterTo } = options
  const maxInFlight = Math.max(1, options.subscribeOptions.maxInFlight ?? 10)
  const maxAttempts = Math.max(1, options.subscribeOptions.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS)
  const subscription = pubsub.subscription(name, {
    flowControl: { maxMessages: maxInFlight, allowExcessMessages: false },
    maxExtensionTime: Duration.from({ minutes: 10 }),
  })
  /** deliveries of each message id seen by this subscriber (see the adapter comment) */
  const seen = new LRUCache<string, number>({ max: SEEN_KEPT })
  const inFlight = new Set<Promise<void>>()

  const attemptOf = (message: Message) => {
    const local = (seen.get(message.id) ?? 0) + 1
    seen.set(message.id, local)
    return Math.max(message.deliveryAttempt || 0, local)
  }

  /** publishes the message to the dead-letter topic and acks it; nacks it when that fails */
  const deadLetter = async (message: Message, to: string, attempt: number) => {
    try {
      await options.publish(to, message.data, {
        ...message.attributes,
        [DEAD_LETTER_ATTRIBUTES.attempts]: String(attempt),
        [DEAD_LETTER_ATTRIBUTES.originalMessageId]: message.id,
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
    } else if (deadLetterTo && attempt >= maxAttempts) await deadLetter(message, deadLetterTo, attempt)
    else message.nack()
  }

  let stopping = false
  subscription.on('message', (message: Message) => {
    // while closing, hand new arrivals straight back; the listener stays so acks of running handlers still flow
    if (stopping) return void message.nack()
    const p: Promise<void> = handleMessage(message).finally(() => inFlight.delete(p))
    inFlight.add(p)
  })
  subscription.on('error', (err: unknown) => logger.error({ err, topic }, 'pubsub subscription error'))

  return {
    async close() {
      if (stopping) return
      stopping = true
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
      await subscription.close()
    },
  }
}

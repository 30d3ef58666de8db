import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import type { Topic } from '../../model/topics.ts'
import type { MessageHandler, SubscribeOptions, Subscription } from '../../ports/queue.ts'
import type { EmbeddedDb } from './db.ts'
import { startConsumer } from './queue-consumer.ts'
import type { QueueLeases } from './queue-leases.ts'

const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5
/** claims failing this many times in a row (a poll every 200 ms): not a lock held for a moment by another process */
const STUCK_AFTER_FAILURES = 3

interface QueueSubscriptions {
  /** Attaches a consumer to the subscription `topic` names (a topic's, or a dead-letter topic's alerts rows). */
  consume(topic: Topic, handler: MessageHandler, subscribeOptions: SubscribeOptions): Promise<Subscription>
  /** topics this adapter has consumers on (the sweep keeps their subscriptions alive) */
  consuming(): Iterable<string>
  /** topics whose consumers cannot claim: a subscriber that cannot claim cannot work */
  stuck(): string[]
  /** closes every consumer, each once its deliveries under way are settled */
  closeAll(): Promise<void>
}

/**
 * The embedded queue's consumers. A topic has at most one subscription (a row of
 * `queue_subscriptions`, created by the first consumer if the topic had none); its consumers, in
 * this process and others, share its messages.
 */
export function queueSubscriptions(
  edb: EmbeddedDb,
  leases: QueueLeases,
  options: { clock: Clock; logger: Logger; leaseMs: number; pollIntervalMs: number },
): QueueSubscriptions {
  const createSubscription = edb.db.prepare(`INSERT INTO queue_subscriptions (topic, declared, active_at) VALUES (?, 0, ?)
    ON CONFLICT (topic) DO UPDATE SET active_at = excluded.active_at`)
  const subscriptions = new Set<Subscription>()
  /** consecutive failed claims per local subscriber's topic */
  const claimFailures = new Map<string, number>()
  const consuming = new Map<string, number>()

  /** the last consumer of `topic` in this adapter is gone */
  const left = (topic: string) => {
    const remaining = (consuming.get(topic) ?? 1) - 1
    if (remaining > 0) consuming.set(topic, remaining)
    else {
      consuming.delete(topic)
      claimFailures.delete(topic)
    }
  }

  return {
    async consume(topic, handler, subscribeOptions) {
      // the topic's subscription, created if it has none: from now on its messages are kept
      await edb.groupCommit(() => createSubscription.run(topic, options.clock.now()))
      consuming.set(topic, (consuming.get(topic) ?? 0) + 1)
      const consumer = startConsumer(topic, handler, {
        ...options,
        path: edb.path,
        leases,
        maxInFlight: Math.max(1, subscribeOptions.maxInFlight ?? 10),
        maxAttempts: Math.max(1, subscribeOptions.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS),
        onClaim: (failed) => {
          if (failed) claimFailures.set(topic, (claimFailures.get(topic) ?? 0) + 1)
          else claimFailures.delete(topic)
        },
      })
      let closing = false
      const subscription: Subscription = {
        async close() {
          if (closing) return
          closing = true
          await consumer.close()
          left(topic)
          subscriptions.delete(subscription)
        },
      }
      subscriptions.add(subscription)
      return subscription
    },
    consuming: () => consuming.keys(),
    stuck: () => [...claimFailures].filter(([, n]) => n >= STUCK_AFTER_FAILURES).map(([t]) => t),
    async closeAll() {
      await Promise.all([...subscriptions].map((s) => s.close()))
    },
  }
}

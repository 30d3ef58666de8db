import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import { retryWhileBusy, type EmbeddedDb } from './db.ts'
import type { Queue } from '../../ports/queue.ts'
import { deadLetterAlertsOf, deadLetterTopicOf, SUBSCRIBED_TOPICS, TOPICS, type Topic } from '../../model/topics.ts'
import { openQueueTables } from './queue-schema.ts'
import { type DeadLetter, deadLetterRows } from './queue-dead-letters.ts'
import { queuePublisher } from './queue-publisher.ts'
import { queueLeases } from './queue-leases.ts'
import { queueSubscriptions } from './queue-subscriptions.ts'
import { startQueueSweeper } from './queue-sweeper.ts'

export interface EmbeddedQueueOptions {
  clock: Clock
  logger: Logger
  /**
   * topics whose subscription exists from the start, declared when the adapter is created so a
   * message published before any consumer attached is kept (default SUBSCRIBED_TOPICS: what `npm
   * start` consumes). Dead-letter topics always have one.
   */
  subscriptions?: readonly string[]
  /** how often subscribers look for messages published by other processes (default 200 ms) */
  pollIntervalMs?: number
  /**
   * how long a delivered message stays invisible to other subscribers (default 10 s). Renewed
   * every third of it while the handler runs, so only a consumer that died (or whose event loop
   * stood still that long) loses it; another one then gets it within a lease.
   */
  leaseMs?: number
  /** first redelivery delay after a nack; doubles per attempt up to 60 s (default 1 s) */
  nackBackoffMs?: number
  /** an unacknowledged message is dropped this long after it was published (default 7 days, as Pub/Sub's retention) */
  retentionMs?: number
  /** a subscription created by subscribe() (not declared) that no consumer used this long is deleted with its messages (default 1 day) */
  idleSubscriptionMs?: number
  /** how often expired messages and idle subscriptions are removed (default 60 s) */
  sweepIntervalMs?: number
}

export interface EmbeddedQueue extends Queue {
  /** messages that exhausted their delivery attempts on `topic`, oldest first */
  readDeadLetters(topic: Topic): Promise<DeadLetter[]>
  /** removes expired messages and idle subscriptions now (the sweep that runs every sweepIntervalMs); resolves with the messages removed */
  sweep(): Promise<number>
}

export const DEFAULT_LEASE_MS = 10_000
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60_000

/**
 * The queue on the embedded SQLite file, with Pub/Sub's semantics (ports/queue.ts). A topic has at
 * most one subscription (a row of `queue_subscriptions`; its consumers share its messages); a
 * message is a row, inserted only if its topic has a subscription when it is published. A
 * delivery is a lease, renewed while the handler works; the leases of a process that died are
 * released as soon as an adapter sees it dead. Ack deletes the row; nack makes it visible again
 * after a backoff, or moves it to `<topic>-dead-letter` once it has been delivered
 * maxDeliveryAttempts times. Messages nobody acknowledges are removed after the retention period
 * by a sweep that deletes in small batches.
 *
 * One concern per part: the tables (queue-schema.ts), publishing (queue-publisher.ts), consumers
 * and their subscriptions (queue-subscriptions.ts, queue-consumer.ts), leases, acks and nacks
 * (queue-leases.ts), dead letters (queue-dead-letters.ts), in-process wake-ups (queue-wakeups.ts)
 * and the sweep (queue-sweeper.ts).
 */
export function createEmbeddedQueue(edb: EmbeddedDb, options: EmbeddedQueueOptions): EmbeddedQueue {
  const { clock, logger } = options
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS

  const declared = [...new Set([...(options.subscriptions ?? SUBSCRIBED_TOPICS), ...TOPICS.map(deadLetterTopicOf), ...TOPICS.map(deadLetterAlertsOf)])]
  openQueueTables(edb, declared, { now: clock.now(), retentionMs, logger })
  const deadLetters = deadLetterRows(edb, { clock, logger, retentionMs })
  const publisher = queuePublisher(edb, deadLetters, { clock, retentionMs })
  const leases = queueLeases(edb, deadLetters, { clock, logger, leaseMs, nackBackoffMs: options.nackBackoffMs ?? 1000 })
  const subscriptions = queueSubscriptions(edb, leases, { clock, logger, leaseMs, pollIntervalMs: options.pollIntervalMs ?? 200 })
  let closed = false
  const sweeper = startQueueSweeper(edb, {
    clock,
    logger,
    retentionMs,
    idleSubscriptionMs: options.idleSubscriptionMs ?? 24 * 60 * 60_000,
    sweepIntervalMs: options.sweepIntervalMs,
    consuming: () => subscriptions.consuming(),
    closed: () => closed,
  })

  const queue: EmbeddedQueue = {
    async publish(topic, data, attributes = {}) {
      if (closed) throw new Error('queue closed')
      return publisher.publish(topic, data, attributes)
    },

    async subscribe(topic, handler, subscribeOptions = {}) {
      if (closed) throw new Error('queue closed')
      return subscriptions.consume(topic, handler, subscribeOptions)
    },

    // its own rows (the alerts copies), consumed like a topic's; never dead-lettered themselves
    async subscribeDeadLetters(topic, handler, subscribeOptions = {}) {
      if (closed) throw new Error('queue closed')
      return subscriptions.consume(deadLetterAlertsOf(topic) as Topic, handler, { ...subscribeOptions, maxDeliveryAttempts: Number.POSITIVE_INFINITY })
    },

    async readDeadLetters(topic) {
      return deadLetters.read(topic)
    },

    sweep: () => sweeper.sweep(),

    health() {
      if (closed) return { ok: false, reason: 'queue closed' }
      if (!edb.db.isOpen) return { ok: false, reason: 'database closed' }
      const stuck = subscriptions.stuck()
      return stuck.length > 0 ? { ok: false, reason: `claiming failing on ${stuck.join(', ')}` } : { ok: true }
    },

    async close() {
      if (closed) return
      closed = true
      sweeper.stop()
      await publisher.finished() // publishes under way still learn whether they are durable
      await subscriptions.closeAll()
      await sweeper.finished()
    },
  }
  // a restart after a crash: what the dead process held is due now, not in one lease
  retryWhileBusy(() => edb.transaction(() => leases.reapDeadOwners(clock.now())))
  return queue
}

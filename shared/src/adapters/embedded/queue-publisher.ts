import { randomUUID } from 'node:crypto'
import type { Clock } from '../../model/clock.ts'
import { withTraceparent } from '../../logging/trace-propagation.ts'
import type { EmbeddedDb } from './db.ts'
import type { DeadLetterRows } from './queue-dead-letters.ts'
import { wake } from './queue-wakeups.ts'

/**
 * A message id: a UUIDv7 (RFC 9562: the millisecond time in the first 48 bits, then 74 random
 * bits of randomUUID's buffered entropy). Time-ordered ids go to the right edge of the `id`
 * index, so the messages committed together dirty one of its pages instead of one random page
 * each: a random UUID per message doubled the cost of a commit's WAL writes (docs/performance.md,
 * "Fourth pass").
 */
function timeOrderedMessageId(nowMs: number): string {
  const time = nowMs.toString(16).padStart(12, '0')
  // randomUUID(): xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx; its first 48 bits give way to the time, its version digit to 7
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randomUUID().slice(15)}`
}

interface QueuePublisher {
  /** keeps the message if its topic has a subscription; resolves with its id once it is durable */
  publish(topic: string, data: Buffer, attributes: Record<string, string>): Promise<string>
  /** resolves once the publishes under way know whether they are durable */
  finished(): Promise<void>
}

/**
 * The embedded queue's publish: a message is a row, inserted only if its topic has a subscription
 * when it is published (Pub/Sub accepts and drops it otherwise), and the publish resolves once the
 * WAL holding it is on disk.
 */
export function queuePublisher(edb: EmbeddedDb, deadLetters: DeadLetterRows, options: { clock: Clock; retentionMs: number }): QueuePublisher {
  const { clock, retentionMs } = options
  // the subscription is looked up in the insert's transaction, then a plain insert: one
  // `INSERT … SELECT … WHERE EXISTS` cost about twice as much CPU (docs/performance.md, "Fourth pass")
  const subscribed = edb.db.prepare('SELECT 1 FROM queue_subscriptions WHERE topic = ?')
  const insert = edb.db.prepare(`INSERT INTO queue_messages (id, topic, data, attributes, published_at, visible_at, expire_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const syncing = new Set<Promise<void>>()

  return {
    async publish(topic, data, attributes) {
      const now = clock.now()
      const id = timeOrderedMessageId(now)
      // publishes (and other hot writes) of one event-loop turn share a commit
      // a consumer parking a message on a dead-letter topic: its alerts subscription gets it too
      const alerts = deadLetters.alertsOf(topic)
      const kept = await edb.groupCommit(() => {
        const has = subscribed.get(topic) !== undefined
        if (has) insert.run(id, topic, data, JSON.stringify(withTraceparent(attributes)), new Date(now).toISOString(), now, now + retentionMs)
        if (alerts) deadLetters.copyToAlerts(alerts, id)
        return has
      })
      if (alerts) wake(edb.path, alerts)
      // no subscription: nothing was kept, so there is nothing to wait for (Pub/Sub accepts and drops it too)
      if (!kept) return id
      wake(edb.path, topic)
      // group commit: the caller answers "accepted" only once the WAL is fsynced; the sync runs
      // off the event loop and one sync covers every publish committed before it started
      const synced = edb.syncWal()
      syncing.add(synced)
      try {
        await synced
      } finally {
        syncing.delete(synced)
      }
      return id
    },
    async finished() {
      await Promise.allSettled([...syncing])
    },
  }
}

import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import { DEAD_LETTER_ATTRIBUTES, deadLetterAlertsOf, deadLetterTopicOf, TOPICS, type Topic } from '../../model/topics.ts'
import type { EmbeddedDb } from './db.ts'
import { wake } from './queue-wakeups.ts'

/** A message parked on `<topic>-dead-letter`, as ops and tests read it. */
export interface DeadLetter {
  id: string
  data: Buffer
  attributes: Record<string, string>
  deliveryAttempts: number
  publishedAt: string
}

/** the suffix of an alerts row's id (see copyToAlerts) */
export const ALERTS_ROW_SUFFIX = '#alerts'

export interface DeadLetterRows {
  /**
   * Moves a leased message that used up its attempts to `<topic>-dead-letter` (and its alerts
   * subscription), unless its lease `token` was lost; wakes the alerts' consumers.
   */
  park(topic: Topic, seq: number, id: string, token: string, attempt: number): Promise<void>
  /** the alerts subscription of a dead-letter topic's name, or null for another topic */
  alertsOf(topic: string): string | null
  /** inside the publish's commit: the alerts row of message `id`, if `alerts` has a subscription */
  copyToAlerts(alerts: string, id: string): void
  /** the messages parked from `topic`, oldest first */
  read(topic: Topic): DeadLetter[]
}

interface DeadLetterRow {
  id: string
  data: Uint8Array
  attributes: string
  published_at: string
  delivery_count: number
}

/**
 * The dead-letter part of the embedded queue. A dead-letter topic has two subscriptions
 * (`<topic>-dead-letter`, read by `read`, and its alerts subscription): a row per subscription.
 * The copy's row id is `<id>#alerts` (ids are unique per table); it is delivered as `<id>`, the
 * same message as Pub/Sub would give both.
 */
export function deadLetterRows(edb: EmbeddedDb, options: { clock: Clock; logger: Logger; retentionMs: number }): DeadLetterRows {
  const { clock, logger, retentionMs } = options
  const { db } = edb
  // with the attributes Pub/Sub's dead-letter policy adds (model/topics.ts DEAD_LETTER_ATTRIBUTES)
  const moveToDeadLetter = db.prepare(
    `UPDATE queue_messages SET topic = ?, visible_at = ?, lease_token = NULL, expire_at = ?,
      attributes = json_set(attributes, '$.${DEAD_LETTER_ATTRIBUTES.sourceSubscription}', ?, '$.${DEAD_LETTER_ATTRIBUTES.sourceDeliveryCount}', ?)
    WHERE seq = ? AND lease_token = ?`,
  )
  const copyToAlerts = db.prepare(`INSERT OR IGNORE INTO queue_messages (id, topic, data, attributes, published_at, visible_at, expire_at)
    SELECT id || '${ALERTS_ROW_SUFFIX}', ?1, data, attributes, published_at, visible_at, expire_at FROM queue_messages
    WHERE id = ?2 AND EXISTS (SELECT 1 FROM queue_subscriptions WHERE topic = ?1)`)
  const selectDead = db.prepare('SELECT id, data, attributes, published_at, delivery_count FROM queue_messages WHERE topic = ? ORDER BY seq')

  return {
    async park(topic, seq, id, token, attempt) {
      const now = clock.now()
      const alerts = deadLetterAlertsOf(topic)
      await edb.groupCommit(() => {
        const moved = moveToDeadLetter.run(deadLetterTopicOf(topic), now, now + retentionMs, `${topic}-sub`, String(attempt), seq, token)
        if (Number(moved.changes) > 0) copyToAlerts.run(alerts, id)
      })
      wake(edb.path, alerts)
      logger.warn({ topic, seq, attempt }, 'message moved to dead-letter topic')
    },
    alertsOf(name) {
      const source = TOPICS.find((t) => deadLetterTopicOf(t) === name)
      return source ? deadLetterAlertsOf(source) : null
    },
    copyToAlerts(alerts, id) {
      copyToAlerts.run(alerts, id)
    },
    read(topic) {
      const rows = selectDead.all(deadLetterTopicOf(topic)) as unknown as DeadLetterRow[]
      return rows.map((row) => ({
        id: row.id,
        data: Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength), // a view: the row's copy is ours
        attributes: JSON.parse(row.attributes) as Record<string, string>,
        deliveryAttempts: row.delivery_count,
        publishedAt: row.published_at,
      }))
    },
  }
}

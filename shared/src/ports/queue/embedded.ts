import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import type { Clock } from '../../clock.ts'
import type { EmbeddedDb } from '../../embedded/db.ts'
import {
  deadLetterTopicOf,
  type MessageHandler, type Queue, type QueueMessage, type SubscribeOptions, type Subscription, type Topic,
} from './interface.ts'

export interface EmbeddedQueueOptions {
  clock: Clock
  logger: Logger
  /** how often subscribers look for messages published by other processes (default 200 ms) */
  pollIntervalMs?: number
  /** how long a delivered message stays invisible to other subscribers; renewed while the handler runs (default 60 s) */
  leaseMs?: number
  /** first redelivery delay after a nack; doubles per attempt up to 60 s (default 1 s) */
  nackBackoffMs?: number
}

/** A message parked on `<topic>-dead-letter`, as ops and tests read it. */
export interface DeadLetter {
  id: string
  data: Buffer
  attributes: Record<string, string>
  deliveryAttempts: number
  publishedAt: string
}

export interface EmbeddedQueue extends Queue {
  /** messages that exhausted their delivery attempts on `topic`, oldest first */
  readDeadLetters(topic: Topic): Promise<DeadLetter[]>
}

const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5
const MAX_NACK_BACKOFF_MS = 60_000

/**
 * In-process wake-ups: a publish on one adapter wakes subscribers of the same file and topic in
 * this process at once; other processes find the message on their next poll.
 */
const wakeups = new EventEmitter().setMaxListeners(0)
const wakeKey = (path: string, topic: string) => `${path}\u0000${topic}`

interface MessageRow {
  seq: number
  id: string
  data: Uint8Array
  attributes: string
  published_at: string
  delivery_count: number
}

/**
 * The queue on the embedded SQLite file. A message is a row; a delivery is a lease (the row's
 * `visible_at` moves into the future and its `lease_token` names the holder). Claims run in
 * BEGIN IMMEDIATE transactions, so subscribers in several processes on one file never both hold
 * one message. Ack deletes the row; nack makes it visible again after a backoff, or moves it to
 * `<topic>-dead-letter` once it has been delivered maxDeliveryAttempts times.
 */
export function createEmbeddedQueue(edb: EmbeddedDb, options: EmbeddedQueueOptions): EmbeddedQueue {
  const { clock, logger } = options
  const pollIntervalMs = options.pollIntervalMs ?? 200
  const leaseMs = options.leaseMs ?? 60_000
  const nackBackoffMs = options.nackBackoffMs ?? 1000
  const { db } = edb

  db.exec(`
    CREATE TABLE IF NOT EXISTS queue_messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      topic TEXT NOT NULL,
      data BLOB NOT NULL,
      attributes TEXT NOT NULL,
      published_at TEXT NOT NULL,
      visible_at INTEGER NOT NULL,
      delivery_count INTEGER NOT NULL DEFAULT 0,
      lease_token TEXT
    );
    CREATE INDEX IF NOT EXISTS queue_messages_due ON queue_messages (topic, visible_at, seq);
  `)
  const insert = db.prepare(
    'INSERT INTO queue_messages (id, topic, data, attributes, published_at, visible_at) VALUES (?, ?, ?, ?, ?, ?)',
  )
  const selectDue = db.prepare(
    'SELECT seq, id, data, attributes, published_at, delivery_count FROM queue_messages WHERE topic = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?',
  )
  const lease = db.prepare(
    'UPDATE queue_messages SET delivery_count = delivery_count + 1, visible_at = ?, lease_token = ? WHERE seq = ?',
  )
  const renew = db.prepare('UPDATE queue_messages SET visible_at = ? WHERE seq = ? AND lease_token = ?')
  const remove = db.prepare('DELETE FROM queue_messages WHERE seq = ?')
  const release = db.prepare(
    'UPDATE queue_messages SET visible_at = ?, lease_token = NULL WHERE seq = ? AND lease_token = ?',
  )
  const moveToDeadLetter = db.prepare(
    'UPDATE queue_messages SET topic = ?, visible_at = ?, lease_token = NULL WHERE seq = ? AND lease_token = ?',
  )
  const selectDead = db.prepare(
    'SELECT id, data, attributes, published_at, delivery_count FROM queue_messages WHERE topic = ? ORDER BY seq',
  )

  const subscriptions = new Set<{ close(): Promise<void> }>()
  let closed = false

  /** Leases up to `max` due messages of `topic` to one subscriber, in one transaction. */
  function claim(topic: Topic, max: number): Array<{ row: MessageRow; token: string }> {
    return edb.transaction(() => {
      const now = clock.now()
      const rows = selectDue.all(topic, now, max) as unknown as MessageRow[]
      return rows.map((row) => {
        const token = randomUUID()
        lease.run(now + leaseMs, token, row.seq)
        return { row: { ...row, delivery_count: row.delivery_count + 1 }, token }
      })
    })
  }

  function settle(topic: Topic, seq: number, token: string, result: 'ack' | 'nack', attempt: number, maxAttempts: number): void {
    if (result === 'ack') {
      // unconditional: the work is done even if our lease lapsed and someone else holds it now
      remove.run(seq)
    } else if (attempt >= maxAttempts) {
      moveToDeadLetter.run(deadLetterTopicOf(topic), clock.now(), seq, token)
      logger.warn({ topic, seq, attempt }, 'message moved to dead-letter topic')
    } else {
      const backoff = Math.min(nackBackoffMs * 2 ** (attempt - 1), MAX_NACK_BACKOFF_MS)
      release.run(clock.now() + backoff, seq, token)
    }
  }

  function toMessage(row: MessageRow): QueueMessage {
    return {
      id: row.id,
      data: Buffer.from(row.data),
      attributes: JSON.parse(row.attributes) as Record<string, string>,
      deliveryAttempt: row.delivery_count,
      publishedAt: row.published_at,
    }
  }

  const syncing = new Set<Promise<void>>()
  const queue: EmbeddedQueue = {
    async publish(topic, data, attributes = {}) {
      if (closed) throw new Error('queue closed')
      const id = randomUUID()
      const now = clock.now()
      // publishes (and other hot writes) of one event-loop turn share a commit
      await edb.groupCommit(() => insert.run(id, topic, data, JSON.stringify(attributes), new Date(now).toISOString(), now))
      wakeups.emit(wakeKey(edb.path, topic))
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

    async subscribe(topic, handler: MessageHandler, subscribeOptions: SubscribeOptions = {}): Promise<Subscription> {
      if (closed) throw new Error('queue closed')
      const maxInFlight = Math.max(1, subscribeOptions.maxInFlight ?? 10)
      const maxAttempts = Math.max(1, subscribeOptions.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS)
      const inFlight = new Set<Promise<void>>()
      let stopped = false
      let timer: NodeJS.Timeout | null = null
      let polling = false
      let pollAgain = false

      const run = async (row: MessageRow, token: string) => {
        // keep the lease while the handler works, so a long batch is not redelivered mid-way
        const renewal = setInterval(() => {
          try {
            renew.run(clock.now() + leaseMs, row.seq, token)
          } catch (err) {
            logger.warn({ err, topic }, 'lease renewal failed')
          }
        }, Math.max(10, Math.floor(leaseMs / 3)))
        let result: 'ack' | 'nack'
        try {
          result = (await handler(toMessage(row))) === 'ack' ? 'ack' : 'nack'
        } catch (err) {
          logger.error({ err, topic, messageId: row.id, attempt: row.delivery_count }, 'message handler failed')
          result = 'nack'
        } finally {
          clearInterval(renewal)
        }
        try {
          settle(topic, row.seq, token, result, row.delivery_count, maxAttempts)
        } catch (err) {
          // the lease expires and the message comes back: at-least-once still holds
          logger.error({ err, topic, messageId: row.id }, 'settling message failed')
        }
      }

      const poll = () => {
        if (stopped) return
        if (polling) {
          pollAgain = true
          return
        }
        polling = true
        try {
          do {
            pollAgain = false
            const free = maxInFlight - inFlight.size
            if (free <= 0) break
            let claimed: Array<{ row: MessageRow; token: string }>
            try {
              claimed = claim(topic, free)
            } catch (err) {
              logger.warn({ err, topic }, 'claiming messages failed')
              break
            }
            for (const { row, token } of claimed) {
              const p: Promise<void> = run(row, token).finally(() => {
                inFlight.delete(p)
                // a slot is free (and a nacked message may be due): look again soon
                queueMicrotask(poll)
              })
              inFlight.add(p)
            }
            if (claimed.length === free) pollAgain = true
          } while (pollAgain && !stopped)
        } finally {
          polling = false
        }
      }

      const schedule = () => {
        if (stopped) return
        timer = setTimeout(() => {
          poll()
          schedule()
        }, pollIntervalMs)
      }
      const onWake = () => poll()
      wakeups.on(wakeKey(edb.path, topic), onWake)
      poll()
      schedule()

      const subscription = {
        async close() {
          if (stopped) return
          stopped = true
          if (timer) clearTimeout(timer)
          wakeups.off(wakeKey(edb.path, topic), onWake)
          while (inFlight.size > 0) await Promise.allSettled([...inFlight])
          subscriptions.delete(subscription)
        },
      }
      subscriptions.add(subscription)
      return subscription
    },

    async readDeadLetters(topic) {
      const rows = selectDead.all(deadLetterTopicOf(topic)) as unknown as Array<Omit<MessageRow, 'seq'>>
      return rows.map((row) => ({
        id: row.id,
        data: Buffer.from(row.data),
        attributes: JSON.parse(row.attributes) as Record<string, string>,
        deliveryAttempts: row.delivery_count,
        publishedAt: row.published_at,
      }))
    },

    async close() {
      if (closed) return
      closed = true
      await Promise.allSettled([...syncing]) // publishes under way still learn whether they are durable
      await Promise.all([...subscriptions].map((s) => s.close()))
    },
  }
  return queue
}

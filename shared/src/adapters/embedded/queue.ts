import { randomUUID } from 'node:crypto'
import { EventEmitter } from 'node:events'
import { BroadcastChannel } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import { retryWhileBusy, type EmbeddedDb } from './db.ts'
import { leaseOwnersOf, REAP_EVERY_MS } from './lease-owners.ts'
import { nextSlice } from '../../lib/slices.ts'
import type { MessageHandler, Queue, QueueMessage, SubscribeOptions, Subscription } from '../../ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES, deadLetterAlertsOf, deadLetterTopicOf, SUBSCRIBED_TOPICS, TOPICS, type Topic } from '../../model/topics.ts'
import { inMessageSpan, withTraceparent } from '../../logging/trace-propagation.ts'

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
  /** removes expired messages and idle subscriptions now (the sweep that runs every sweepIntervalMs); resolves with the messages removed */
  sweep(): Promise<number>
}

const DEFAULT_MAX_DELIVERY_ATTEMPTS = 5
const ALERTS_ROW_SUFFIX = '#alerts'
/** the alerts subscription of a dead-letter topic's name, or null for another topic */
const alertsOfDeadLetterTopic = (name: string): string | null => {
  const source = TOPICS.find((t) => deadLetterTopicOf(t) === name)
  return source ? deadLetterAlertsOf(source) : null
}
const MAX_NACK_BACKOFF_MS = 60_000
export const DEFAULT_LEASE_MS = 10_000
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60_000
/** rows deleted per transaction by the sweep: each batch is a short write, the event loop runs between them */
const SWEEP_BATCH = 500

/**
 * In-process wake-ups: a publish on one adapter wakes subscribers of the same file and topic in
 * this process at once, on this thread (the emitter) and on its other threads (the channel: the
 * local stack's consumer thread, platform/background-thread.ts); other processes find the message
 * on their next poll.
 */
const wakeups = new EventEmitter().setMaxListeners(0)
const wakeKey = (path: string, topic: string) => `${path}\u0000${topic}`
const otherThreads = new BroadcastChannel('lsv-embedded-queue-wakeups')
otherThreads.unref()
otherThreads.onmessage = (event) => {
  wakeups.emit(String((event as { data: unknown }).data))
}
const wake = (key: string) => {
  wakeups.emit(key)
  otherThreads.postMessage(key)
}

interface MessageRow {
  seq: number
  id: string
  data: Uint8Array
  attributes: string
  published_at: string
  delivery_count: number
}

const MESSAGES_TABLE = `
  CREATE TABLE IF NOT EXISTS queue_messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    topic TEXT NOT NULL,
    data BLOB NOT NULL,
    attributes TEXT NOT NULL,
    published_at TEXT NOT NULL,
    visible_at INTEGER NOT NULL,
    delivery_count INTEGER NOT NULL DEFAULT 0,
    lease_token TEXT,
    expire_at INTEGER NOT NULL
  )`
const MESSAGES_INDEXES = `
  CREATE INDEX IF NOT EXISTS queue_messages_due ON queue_messages (topic, visible_at, seq);
  CREATE INDEX IF NOT EXISTS queue_messages_expiry ON queue_messages (expire_at);
  CREATE INDEX IF NOT EXISTS queue_messages_leased ON queue_messages (lease_token) WHERE lease_token IS NOT NULL`

/**
 * Creates or upgrades the queue's tables in one write transaction (other processes opening the
 * same file wait, then find them done). A file from before subscriptions existed kept every
 * message of every topic, consumed or not (a long `npm start` run: ~900,000 `contact-changes`
 * rows, 2.1 GB): its messages are copied to the new table only for topics that now have a
 * subscription, and the old table is dropped. Returns how many rows were left behind.
 */
function migrate(edb: EmbeddedDb, declared: readonly string[], now: number, retentionMs: number): number {
  const { db } = edb
  return retryWhileBusy(
    () =>
      edb.transaction(() => {
        db.exec(`CREATE TABLE IF NOT EXISTS queue_subscriptions (
      topic TEXT PRIMARY KEY, declared INTEGER NOT NULL, active_at INTEGER NOT NULL) WITHOUT ROWID`)
        const declare = db.prepare(`INSERT INTO queue_subscriptions (topic, declared, active_at) VALUES (?, 1, ?)
      ON CONFLICT (topic) DO UPDATE SET declared = 1`)
        for (const topic of declared) declare.run(topic, now)

        const columns = (db.prepare('PRAGMA table_info(queue_messages)').all() as Array<{ name: string }>).map((c) => c.name)
        if (columns.length > 0 && !columns.includes('expire_at')) {
          const before = (db.prepare('SELECT count(*) AS n FROM queue_messages').get() as { n: number }).n
          db.exec(MESSAGES_TABLE.replace('queue_messages', 'queue_messages_kept'))
          db.prepare(`INSERT INTO queue_messages_kept
          (seq, id, topic, data, attributes, published_at, visible_at, delivery_count, lease_token, expire_at)
        SELECT seq, id, topic, data, attributes, published_at, visible_at, delivery_count, lease_token, ?
        FROM queue_messages WHERE topic IN (SELECT topic FROM queue_subscriptions)`).run(now + retentionMs)
          const kept = (db.prepare('SELECT count(*) AS n FROM queue_messages_kept').get() as { n: number }).n
          db.exec('DROP TABLE queue_messages')
          db.exec('ALTER TABLE queue_messages_kept RENAME TO queue_messages')
          db.exec(MESSAGES_INDEXES)
          return before - kept
        }
        db.exec(MESSAGES_TABLE)
        db.exec(MESSAGES_INDEXES)
        return 0
      }),
    120_000,
  )
}

/**
 * The queue on the embedded SQLite file, with Pub/Sub's semantics (interface.ts). A topic has at
 * most one subscription (a row of `queue_subscriptions`; its consumers share its messages); a
 * message is a row, inserted only if its topic has a subscription when it is published. A
 * delivery is a lease (the row's `visible_at` moves into the future and its `lease_token` names
 * the holder: `<owner> <random>`, the owner being the process, lease-owners.ts), renewed while the
 * handler works. The leases of a process that died are released as soon as an adapter sees it
 * dead (when it opens, and on claims at most every second), not when they run out. Claims run in BEGIN IMMEDIATE transactions, so
 * subscribers in several processes on one file never both hold one message. Ack deletes the row;
 * nack makes it visible again after a backoff, or moves it to `<topic>-dead-letter` once it has
 * been delivered maxDeliveryAttempts times. Messages nobody acknowledges are removed after the
 * retention period by a sweep that deletes in small batches.
 */
export function createEmbeddedQueue(edb: EmbeddedDb, options: EmbeddedQueueOptions): EmbeddedQueue {
  const { clock, logger } = options
  const pollIntervalMs = options.pollIntervalMs ?? 200
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS
  const nackBackoffMs = options.nackBackoffMs ?? 1000
  const retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS
  const idleSubscriptionMs = options.idleSubscriptionMs ?? 24 * 60 * 60_000
  const { db } = edb

  const declared = [...new Set([...(options.subscriptions ?? SUBSCRIBED_TOPICS), ...TOPICS.map(deadLetterTopicOf), ...TOPICS.map(deadLetterAlertsOf)])]
  const leftBehind = migrate(edb, declared, clock.now(), retentionMs)
  if (leftBehind > 0) {
    logger.warn({ removed: leftBehind }, 'queue: messages of topics without a subscription removed (kept by an earlier version)')
  }
  // a file from before auto_vacuum=INCREMENTAL would keep its size forever; once, now that the
  // unconsumed backlog is gone, it is rewritten (proportional to the live data)
  const started = performance.now()
  if (edb.convertToIncrementalVacuum()) {
    logger.warn({ ms: Math.round(performance.now() - started) }, 'database rewritten once so that free pages can be given back')
  }

  const insert = db.prepare(`INSERT INTO queue_messages (id, topic, data, attributes, published_at, visible_at, expire_at)
    SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM queue_subscriptions WHERE topic = ?)`)
  const createSubscription = db.prepare(`INSERT INTO queue_subscriptions (topic, declared, active_at) VALUES (?, 0, ?)
    ON CONFLICT (topic) DO UPDATE SET active_at = excluded.active_at`)
  const selectDue = db.prepare(
    'SELECT seq, id, data, attributes, published_at, delivery_count FROM queue_messages WHERE topic = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?',
  )
  const lease = db.prepare('UPDATE queue_messages SET delivery_count = delivery_count + 1, visible_at = ?, lease_token = ? WHERE seq = ?')
  const renew = db.prepare('UPDATE queue_messages SET visible_at = ? WHERE seq = ? AND lease_token = ?')
  const remove = db.prepare('DELETE FROM queue_messages WHERE seq = ?')
  const release = db.prepare('UPDATE queue_messages SET visible_at = ?, lease_token = NULL WHERE seq = ? AND lease_token = ?')
  // with the attributes Pub/Sub's dead-letter policy adds (model/topics.ts DEAD_LETTER_ATTRIBUTES)
  const moveToDeadLetter = db.prepare(
    `UPDATE queue_messages SET topic = ?, visible_at = ?, lease_token = NULL, expire_at = ?,
      attributes = json_set(attributes, '$.${DEAD_LETTER_ATTRIBUTES.sourceSubscription}', ?, '$.${DEAD_LETTER_ATTRIBUTES.sourceDeliveryCount}', ?)
    WHERE seq = ? AND lease_token = ?`,
  )
  /**
   * A dead-letter topic has two subscriptions (`<topic>-dead-letter`, read by readDeadLetters,
   * and its alerts subscription): a row per subscription. The copy's row id is `<id>#alerts` (ids
   * are unique per table); it is delivered as `<id>`, the same message as Pub/Sub would give both.
   */
  const copyToAlerts = db.prepare(`INSERT OR IGNORE INTO queue_messages (id, topic, data, attributes, published_at, visible_at, expire_at)
    SELECT id || '${ALERTS_ROW_SUFFIX}', ?1, data, attributes, published_at, visible_at, expire_at FROM queue_messages
    WHERE id = ?2 AND EXISTS (SELECT 1 FROM queue_subscriptions WHERE topic = ?1)`)
  const selectDead = db.prepare('SELECT id, data, attributes, published_at, delivery_count FROM queue_messages WHERE topic = ? ORDER BY seq')
  // expired and not held by a live lease (a handler still working on it finishes first)
  const deleteExpired = db.prepare(`DELETE FROM queue_messages WHERE seq IN (
    SELECT seq FROM queue_messages WHERE expire_at <= ?1 AND (lease_token IS NULL OR visible_at <= ?1) LIMIT ${SWEEP_BATCH})
    RETURNING topic`)
  // the leases of a dead owner: a range of lease_token (`<owner> …`), an index seek
  const releaseOwner = db.prepare(`UPDATE queue_messages SET visible_at = min(visible_at, ?1), lease_token = NULL
    WHERE lease_token >= ?2 || ' ' AND lease_token < ?2 || '!'`)
  const markActive = db.prepare('UPDATE queue_subscriptions SET active_at = ? WHERE topic = ?')
  const selectIdle = db.prepare('SELECT topic FROM queue_subscriptions WHERE declared = 0 AND active_at <= ?')
  const deleteSubscription = db.prepare('DELETE FROM queue_subscriptions WHERE topic = ? AND declared = 0 AND active_at <= ?')
  const deleteTopicBatch = db.prepare(`DELETE FROM queue_messages WHERE seq IN (
    SELECT seq FROM queue_messages WHERE topic = ?1 AND NOT EXISTS (SELECT 1 FROM queue_subscriptions WHERE topic = ?1) LIMIT ${SWEEP_BATCH})`)

  const subscriptions = new Set<{ close(): Promise<void> }>()
  /** consecutive failed claims per local subscriber's topic: a subscriber that cannot claim cannot work */
  const claimFailures = new Map<string, number>()
  /** topics this adapter has consumers on (the sweep keeps their subscriptions alive) */
  const consuming = new Map<string, number>()
  let closed = false

  const owners = leaseOwnersOf(edb)
  let lastReap = 0
  /** Releases the leases of owners that died since this adapter last looked; inside a transaction. */
  function reapDeadOwners(now: number): void {
    lastReap = Date.now()
    for (const owner of owners.deadOwners(queue)) {
      const { changes } = releaseOwner.run(now, owner)
      if (Number(changes) > 0) logger.warn({ owner, messages: Number(changes) }, 'queue: messages leased by a process that is gone released at once')
    }
  }

  /** Leases up to `max` due messages of `topic` to one subscriber, in one transaction. */
  function claim(topic: Topic, max: number): Array<{ row: MessageRow; token: string }> {
    return edb.transaction(() => {
      const now = clock.now()
      if (Date.now() - lastReap >= REAP_EVERY_MS) reapDeadOwners(now)
      const rows = selectDue.all(topic, now, max) as unknown as MessageRow[]
      return rows.map((row) => {
        const token = `${owners.self} ${randomUUID()}`
        lease.run(now + leaseMs, token, row.seq)
        return { row: { ...row, delivery_count: row.delivery_count + 1 }, token }
      })
    })
  }

  /** Settles one delivery; acks and nacks of one turn share a commit. */
  async function settle(topic: Topic, seq: number, id: string, token: string, result: 'ack' | 'nack', attempt: number, maxAttempts: number): Promise<void> {
    if (result === 'ack') {
      // unconditional: the work is done even if our lease lapsed and someone else holds it now
      await edb.groupCommit(() => remove.run(seq))
    } else if (attempt >= maxAttempts) {
      const now = clock.now()
      const alerts = deadLetterAlertsOf(topic)
      await edb.groupCommit(() => {
        const moved = moveToDeadLetter.run(deadLetterTopicOf(topic), now, now + retentionMs, `${topic}-sub`, String(attempt), seq, token)
        if (Number(moved.changes) > 0) copyToAlerts.run(alerts, id)
      })
      wake(wakeKey(edb.path, alerts))
      logger.warn({ topic, seq, attempt }, 'message moved to dead-letter topic')
    } else {
      const backoff = Math.min(nackBackoffMs * 2 ** (attempt - 1), MAX_NACK_BACKOFF_MS)
      await edb.groupCommit(() => release.run(clock.now() + backoff, seq, token))
    }
  }

  function toMessage(row: MessageRow): QueueMessage {
    return {
      id: row.id.endsWith(ALERTS_ROW_SUFFIX) ? row.id.slice(0, -ALERTS_ROW_SUFFIX.length) : row.id,
      data: Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength), // a view: the row's copy is ours
      attributes: JSON.parse(row.attributes) as Record<string, string>,
      deliveryAttempt: row.delivery_count,
      publishedAt: row.published_at,
    }
  }

  let sweeping: Promise<number> | null = null
  /** Deletes expired messages and idle undeclared subscriptions, a small batch per transaction. */
  async function sweepOnce(): Promise<number> {
    let removed = 0
    const now = clock.now()
    for (const topic of consuming.keys()) markActive.run(now, topic)
    const expiredByTopic = new Map<string, number>()
    for (;;) {
      if (closed) return removed
      const rows = edb.transaction(() => deleteExpired.all(now)) as Array<{ topic: string }>
      for (const r of rows) expiredByTopic.set(r.topic, (expiredByTopic.get(r.topic) ?? 0) + 1)
      removed += rows.length
      if (rows.length < SWEEP_BATCH) break
      await nextSlice()
    }
    if (expiredByTopic.size > 0) {
      logger.warn({ expired: Object.fromEntries(expiredByTopic), retentionMs }, 'queue: messages nobody acknowledged within the retention period removed')
    }
    const idleBefore = now - idleSubscriptionMs
    for (const { topic } of selectIdle.all(idleBefore) as Array<{ topic: string }>) {
      if (closed) return removed
      if (deleteSubscription.run(topic, idleBefore).changes === 0) continue
      logger.info({ topic }, 'queue: subscription without consumers removed')
      for (;;) {
        const n = Number(edb.transaction(() => deleteTopicBatch.run(topic)).changes)
        removed += n
        if (n < SWEEP_BATCH || closed) break
        await nextSlice()
      }
    }
    return removed
  }
  function sweep(): Promise<number> {
    sweeping ??= sweepOnce().finally(() => {
      sweeping = null
    })
    return sweeping
  }
  const sweepTimer = setInterval(() => {
    sweep().catch((err: unknown) => logger.warn({ err }, 'queue sweep failed'))
  }, options.sweepIntervalMs ?? 60_000)
  sweepTimer.unref()
  // the first sweep soon after start: a folder that sat unused for a week has expired messages
  const firstSweep = setTimeout(
    () => {
      sweep().catch((err: unknown) => logger.warn({ err }, 'queue sweep failed'))
    },
    Math.min(1000, options.sweepIntervalMs ?? 1000),
  )
  firstSweep.unref()

  /** Attaches a consumer to the subscription `topic` names (a topic's, or a dead-letter topic's alerts rows). */
  async function consume(topic: Topic, handler: MessageHandler, subscribeOptions: SubscribeOptions): Promise<Subscription> {
    if (closed) throw new Error('queue closed')
    const maxInFlight = Math.max(1, subscribeOptions.maxInFlight ?? 10)
    const maxAttempts = Math.max(1, subscribeOptions.maxDeliveryAttempts ?? DEFAULT_MAX_DELIVERY_ATTEMPTS)
    // the topic's subscription, created if it has none: from now on its messages are kept
    await edb.groupCommit(() => createSubscription.run(topic, clock.now()))
    consuming.set(topic, (consuming.get(topic) ?? 0) + 1)
    const inFlight = new Set<Promise<void>>()
    let stopped = false
    let timer: NodeJS.Timeout | null = null
    let polling = false
    let pollAgain = false

    const run = async (row: MessageRow, token: string) => {
      // the heartbeat: keep the lease while the handler works, so a long batch is not
      // redelivered mid-way, while a consumer that died loses it within one lease
      const renewal = setInterval(
        () => {
          edb.groupCommit(() => renew.run(clock.now() + leaseMs, row.seq, token)).catch((err: unknown) => logger.warn({ err, topic }, 'lease renewal failed'))
        },
        Math.max(10, Math.floor(leaseMs / 3)),
      )
      let result: 'ack' | 'nack'
      try {
        // in a span continuing the publisher's trace (its `traceparent` attribute)
        const message = toMessage(row)
        result = (await inMessageSpan(topic, message, () => handler(message))) === 'ack' ? 'ack' : 'nack'
      } catch (err) {
        logger.error({ err, topic, messageId: row.id, attempt: row.delivery_count }, 'message handler failed')
        result = 'nack'
      } finally {
        clearInterval(renewal)
      }
      try {
        await settle(topic, row.seq, row.id, token, result, row.delivery_count, maxAttempts)
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
            claimFailures.delete(topic)
          } catch (err) {
            claimFailures.set(topic, (claimFailures.get(topic) ?? 0) + 1)
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
        const left = (consuming.get(topic) ?? 1) - 1
        if (left > 0) consuming.set(topic, left)
        else {
          consuming.delete(topic)
          claimFailures.delete(topic)
        }
        subscriptions.delete(subscription)
      },
    }
    subscriptions.add(subscription)
    return subscription
  }

  const syncing = new Set<Promise<void>>()
  const queue: EmbeddedQueue = {
    async publish(topic, data, attributes = {}) {
      if (closed) throw new Error('queue closed')
      const id = randomUUID()
      const now = clock.now()
      // publishes (and other hot writes) of one event-loop turn share a commit
      // a consumer parking a message on a dead-letter topic: its alerts subscription gets it too
      const alerts = alertsOfDeadLetterTopic(topic)
      const { changes } = await edb.groupCommit(() => {
        const row = [data, JSON.stringify(withTraceparent(attributes)), new Date(now).toISOString(), now, now + retentionMs] as const
        const kept = insert.run(id, topic, ...row, topic)
        if (alerts) copyToAlerts.run(alerts, id)
        return kept
      })
      if (alerts) wake(wakeKey(edb.path, alerts))
      // no subscription: nothing was kept, so there is nothing to wait for (Pub/Sub accepts and drops it too)
      if (Number(changes) === 0) return id
      wake(wakeKey(edb.path, topic))
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

    subscribe: (topic, handler, subscribeOptions = {}) => consume(topic, handler, subscribeOptions),

    // its own rows (copyToAlerts), consumed like a topic's; never dead-lettered themselves
    subscribeDeadLetters: (topic, handler, subscribeOptions = {}) =>
      consume(deadLetterAlertsOf(topic) as Topic, handler, { ...subscribeOptions, maxDeliveryAttempts: Number.POSITIVE_INFINITY }),

    async readDeadLetters(topic) {
      const rows = selectDead.all(deadLetterTopicOf(topic)) as unknown as Array<Omit<MessageRow, 'seq'>>
      return rows.map((row) => ({
        id: row.id,
        data: Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength), // a view: the row's copy is ours
        attributes: JSON.parse(row.attributes) as Record<string, string>,
        deliveryAttempts: row.delivery_count,
        publishedAt: row.published_at,
      }))
    },

    sweep,

    health() {
      if (closed) return { ok: false, reason: 'queue closed' }
      if (!db.isOpen) return { ok: false, reason: 'database closed' }
      // a few failures in a row (a poll every 200 ms): not a lock held for a moment by another process
      const stuck = [...claimFailures].filter(([, n]) => n >= 3).map(([t]) => t)
      return stuck.length > 0 ? { ok: false, reason: `claiming failing on ${stuck.join(', ')}` } : { ok: true }
    },

    async close() {
      if (closed) return
      closed = true
      clearInterval(sweepTimer)
      clearTimeout(firstSweep)
      await Promise.allSettled([...syncing]) // publishes under way still learn whether they are durable
      await Promise.all([...subscriptions].map((s) => s.close()))
      await sweeping?.catch(() => 0)
    },
  }
  // a restart after a crash: what the dead process held is due now, not in one lease
  retryWhileBusy(() => edb.transaction(() => reapDeadOwners(clock.now())))
  return queue
}

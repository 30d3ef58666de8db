import type { Logger } from 'pino'
import { retryWhileBusy, type EmbeddedDb } from './db.ts'

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
 * The queue's tables, ready: created or upgraded (migrate), with the `declared` subscriptions.
 * Says what an upgrade left behind, and rewrites a file from before auto_vacuum=INCREMENTAL once.
 */
export function openQueueTables(edb: EmbeddedDb, declared: readonly string[], options: { now: number; retentionMs: number; logger: Logger }): void {
  const { logger } = options
  const leftBehind = migrate(edb, declared, options.now, options.retentionMs)
  if (leftBehind > 0) {
    logger.warn({ removed: leftBehind }, 'queue: messages of topics without a subscription removed (kept by an earlier version)')
  }
  // a file from before auto_vacuum=INCREMENTAL would keep its size forever; once, now that the
  // unconsumed backlog is gone, it is rewritten (proportional to the live data)
  const started = performance.now()
  if (edb.convertToIncrementalVacuum()) {
    logger.warn({ ms: Math.round(performance.now() - started) }, 'database rewritten once so that free pages can be given back')
  }
}

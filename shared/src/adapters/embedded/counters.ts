import { createHash } from 'node:crypto'
import type { EmbeddedDb } from './db.ts'
import type { CounterChange, Counters } from '../../ports/counters.ts'

/**
 * Counters as rows of `rate_counters` (`c:<sha256(key)>`), the table the rate limiter's plain
 * counters always used, so a count kept before this port existed (the queue pool's) carries on.
 * A change joins the other writes of its event-loop turn (groupCommit: one commit for all). An
 * expired row reads as 0 until the rate limiter's pruning deletes it (as Firestore's TTL policy
 * does there); callers give expiring counters keys of their own period, so one is not written
 * again once expired. The last expiry written for a key stands.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_counters (slot TEXT PRIMARY KEY, count INTEGER NOT NULL, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rate_counters_expiry ON rate_counters (expire_at_ms);
`

const counterId = (key: string) => `c:${createHash('sha256').update(key).digest('hex')}`

export function createEmbeddedCounters(edb: EmbeddedDb): Counters {
  const { db } = edb
  db.exec(SCHEMA)
  const upsert = (combine: string) =>
    db.prepare(
      `INSERT INTO rate_counters (slot, count, expire_at_ms) VALUES (?, ?, ?) ON CONFLICT (slot) DO UPDATE SET
       count = ${combine}, expire_at_ms = excluded.expire_at_ms`,
    )
  const add = upsert('count + excluded.count')
  const raise = upsert('max(count, excluded.count)')
  const readLive = db.prepare('SELECT count FROM rate_counters WHERE slot = ? AND expire_at_ms > ?')
  return {
    async apply(changes: readonly CounterChange[], expireAtMs: number): Promise<void> {
      if (changes.length === 0) return
      await edb.groupCommit(() => {
        for (const c of changes) {
          if ('add' in c) add.run(counterId(c.key), c.add, expireAtMs)
          else raise.run(counterId(c.key), c.max, expireAtMs)
        }
      })
    },
    async read(keys: readonly string[], nowMs: number): Promise<number[]> {
      return keys.map((k) => Number((readLive.get(counterId(k), nowMs) as { count: number } | undefined)?.count ?? 0))
    },
    // the database handle belongs to whoever opened it
    async close() {},
  }
}

import type { EmbeddedDb } from './db.ts'
import type { PushLog, PushLogEntry, PushOutcome } from '../../ports/push-log.ts'

/**
 * `push_log`, keyed (connection, id): the newest-first read and the count trim are both ranges of
 * the primary key. Expired rows are deleted on the appends of their connection (the embedded
 * counterpart of Firestore's TTL policy); a read skips them until then.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_log (
  connection_id TEXT NOT NULL, id TEXT NOT NULL, expire_at_ms INTEGER NOT NULL, entry TEXT NOT NULL,
  PRIMARY KEY (connection_id, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS push_outcomes (
  connection_id TEXT NOT NULL, request_id TEXT NOT NULL, expire_at_ms INTEGER NOT NULL, outcome TEXT NOT NULL,
  PRIMARY KEY (connection_id, request_id)) WITHOUT ROWID;
`

export function createEmbeddedPushLog(edb: EmbeddedDb): PushLog {
  const { db } = edb
  db.exec(SCHEMA)
  const insert = db.prepare('INSERT OR REPLACE INTO push_log (connection_id, id, expire_at_ms, entry) VALUES (?, ?, ?, ?)')
  // the keep-th newest id: everything older goes (a no-op while the connection has fewer)
  const trim = db.prepare(
    'DELETE FROM push_log WHERE connection_id = ? AND id < (SELECT id FROM push_log WHERE connection_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
  )
  const expire = db.prepare('DELETE FROM push_log WHERE connection_id = ? AND expire_at_ms <= ?')
  const recent = db.prepare('SELECT entry FROM push_log WHERE connection_id = ? AND expire_at_ms > ? ORDER BY id DESC LIMIT ?')
  const putOutcome = db.prepare('INSERT OR REPLACE INTO push_outcomes (connection_id, request_id, expire_at_ms, outcome) VALUES (?, ?, ?, ?)')
  const expireOutcomes = db.prepare('DELETE FROM push_outcomes WHERE connection_id = ? AND expire_at_ms <= ?')
  const outcomesOf = db.prepare(
    'SELECT request_id, outcome FROM push_outcomes WHERE connection_id = ? AND expire_at_ms > ? AND request_id IN (SELECT value FROM json_each(?))',
  )
  return {
    async append(entries: readonly PushLogEntry[], keep: number, nowMs: number) {
      if (entries.length === 0) return
      await edb.groupCommit(() => {
        for (const e of entries) insert.run(e.connection_id, e.id, e.expire_at_ms, JSON.stringify(e))
        for (const c of new Set(entries.map((e) => e.connection_id))) {
          trim.run(c, c, keep - 1)
          expire.run(c, nowMs)
          expireOutcomes.run(c, nowMs)
        }
      })
    },
    async recordOutcome(connectionId, requestId, outcome, expireAtMs) {
      await edb.groupCommit(() => {
        putOutcome.run(connectionId, requestId, expireAtMs, JSON.stringify(outcome))
      })
    },
    async recent(connectionId, limit, nowMs) {
      const rows = recent.all(connectionId, nowMs, limit) as unknown as Array<{ entry: string }>
      const entries = rows.map((r) => JSON.parse(r.entry) as PushLogEntry)
      if (entries.length === 0) return entries
      const found = outcomesOf.all(connectionId, nowMs, JSON.stringify(entries.map((e) => e.request_id))) as unknown as Array<{
        request_id: string
        outcome: string
      }>
      const byRequest = new Map(found.map((o) => [o.request_id, JSON.parse(o.outcome) as PushOutcome]))
      return entries.map((e) => {
        const outcome = byRequest.get(e.request_id)
        return outcome ? { ...e, outcome } : e
      })
    },
    // the database handle belongs to whoever opened it
    async close() {},
  }
}

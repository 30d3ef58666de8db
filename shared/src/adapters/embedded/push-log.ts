import type { EmbeddedDb } from './db.ts'
import type { PushLog, PushLogEntry, PushOutcome } from '../../ports/push-log.ts'

/**
 * `push_log` (accepted pushes) and `push_log_refused` (refused ones: their own slice, so a flood
 * of refusals never trims an accepted entry), both keyed (connection, id): the newest-first read
 * and the count trim are ranges of the primary key. Expired rows are deleted on the appends of
 * their connection (the embedded counterpart of Firestore's TTL policy); a read skips them until
 * then. A file written before the split kept refused entries in `push_log`: they are read as
 * accepted ones until they expire or are trimmed (7 days at most).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_log (
  connection_id TEXT NOT NULL, id TEXT NOT NULL, expire_at_ms INTEGER NOT NULL, entry TEXT NOT NULL,
  PRIMARY KEY (connection_id, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS push_log_refused (
  connection_id TEXT NOT NULL, id TEXT NOT NULL, expire_at_ms INTEGER NOT NULL, entry TEXT NOT NULL,
  PRIMARY KEY (connection_id, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS push_outcomes (
  connection_id TEXT NOT NULL, request_id TEXT NOT NULL, expire_at_ms INTEGER NOT NULL, outcome TEXT NOT NULL,
  PRIMARY KEY (connection_id, request_id)) WITHOUT ROWID;
`

/** accepted: a 2xx answer (ports/push-log.ts) */
const isAccepted = (e: PushLogEntry) => e.status >= 200 && e.status < 300

/** One kind's table: its insert, count trim, expiry and newest-first read. */
function sliceOf(db: EmbeddedDb['db'], table: 'push_log' | 'push_log_refused') {
  return {
    insert: db.prepare(`INSERT OR REPLACE INTO ${table} (connection_id, id, expire_at_ms, entry) VALUES (?, ?, ?, ?)`),
    // the keep-th newest id: everything older goes (a no-op while the connection has fewer)
    trim: db.prepare(
      `DELETE FROM ${table} WHERE connection_id = ? AND id < (SELECT id FROM ${table} WHERE connection_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
    ),
    expire: db.prepare(`DELETE FROM ${table} WHERE connection_id = ? AND expire_at_ms <= ?`),
    recent: db.prepare(`SELECT entry FROM ${table} WHERE connection_id = ? AND expire_at_ms > ? ORDER BY id DESC LIMIT ?`),
  }
}

export function createEmbeddedPushLog(edb: EmbeddedDb): PushLog {
  const { db } = edb
  db.exec(SCHEMA)
  const accepted = sliceOf(db, 'push_log')
  const refused = sliceOf(db, 'push_log_refused')
  const putOutcome = db.prepare('INSERT OR REPLACE INTO push_outcomes (connection_id, request_id, expire_at_ms, outcome) VALUES (?, ?, ?, ?)')
  const expireOutcomes = db.prepare('DELETE FROM push_outcomes WHERE connection_id = ? AND expire_at_ms <= ?')
  const outcomesOf = db.prepare(
    'SELECT request_id, outcome FROM push_outcomes WHERE connection_id = ? AND expire_at_ms > ? AND request_id IN (SELECT value FROM json_each(?))',
  )
  const read = (slice: ReturnType<typeof sliceOf>, connectionId: string, nowMs: number, limit: number): PushLogEntry[] =>
    limit <= 0 ? [] : (slice.recent.all(connectionId, nowMs, limit) as unknown as Array<{ entry: string }>).map((r) => JSON.parse(r.entry) as PushLogEntry)
  return {
    async append(entries, keep, nowMs) {
      if (entries.length === 0) return
      await edb.groupCommit(() => {
        for (const e of entries) (isAccepted(e) ? accepted : refused).insert.run(e.connection_id, e.id, e.expire_at_ms, JSON.stringify(e))
        for (const c of new Set(entries.map((e) => e.connection_id))) {
          accepted.trim.run(c, c, keep.accepted - 1)
          refused.trim.run(c, c, keep.refused - 1)
          accepted.expire.run(c, nowMs)
          refused.expire.run(c, nowMs)
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
      const entries = [...read(accepted, connectionId, nowMs, limit.accepted), ...read(refused, connectionId, nowMs, limit.refused)].sort((a, b) =>
        a.id < b.id ? 1 : a.id > b.id ? -1 : 0,
      )
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

import type { EmbeddedDb } from './db.ts'
import type { PushLog, PushLogEntry } from '../../ports/push-log.ts'

/**
 * `push_log`, keyed (connection, id): the newest-first read and the count trim are both ranges of
 * the primary key. Expired rows are deleted on the appends of their connection (the embedded
 * counterpart of Firestore's TTL policy); a read skips them until then.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS push_log (
  connection_id TEXT NOT NULL, id TEXT NOT NULL, expire_at_ms INTEGER NOT NULL, entry TEXT NOT NULL,
  PRIMARY KEY (connection_id, id)) WITHOUT ROWID;
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
  return {
    async append(entries: readonly PushLogEntry[], keep: number, nowMs: number) {
      if (entries.length === 0) return
      await edb.groupCommit(() => {
        for (const e of entries) insert.run(e.connection_id, e.id, e.expire_at_ms, JSON.stringify(e))
        for (const c of new Set(entries.map((e) => e.connection_id))) {
          trim.run(c, c, keep - 1)
          expire.run(c, nowMs)
        }
      })
    },
    async recent(connectionId, limit, nowMs) {
      const rows = recent.all(connectionId, nowMs, limit) as unknown as Array<{ entry: string }>
      return rows.map((r) => JSON.parse(r.entry) as PushLogEntry)
    },
    // the database handle belongs to whoever opened it
    async close() {},
  }
}

import type { EmbeddedDb } from './db.ts'
import type { AuditEntry, AuditLogStore } from '../../ports/audit-log.ts'

/** One table of the embedded database; the primary key (account, id) serves the newest-first page. */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_log (
  account_id TEXT NOT NULL, id TEXT NOT NULL, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL,
  target TEXT NOT NULL, details TEXT NOT NULL, PRIMARY KEY (account_id, id)) WITHOUT ROWID;
`

interface Row {
  account_id: string
  id: string
  at: string
  actor: string
  action: string
  target: string
  details: string
}

const fromRow = (r: Row): AuditEntry => ({
  id: r.id,
  account_id: r.account_id,
  at: r.at,
  actor: r.actor,
  action: r.action,
  target: JSON.parse(r.target) as AuditEntry['target'],
  details: JSON.parse(r.details) as AuditEntry['details'],
})

/**
 * Appends one entry (the table is created when missing). The tenant store calls it inside the
 * transaction of the change the entry records, so both commit or neither does.
 */
export function auditAppender(edb: EmbeddedDb): (e: AuditEntry) => void {
  edb.db.exec(SCHEMA)
  const insert = edb.db.prepare('INSERT INTO audit_log (account_id, id, at, actor, action, target, details) VALUES (?, ?, ?, ?, ?, ?, ?)')
  return (e) => {
    insert.run(e.account_id, e.id, e.at, e.actor, e.action, JSON.stringify(e.target), JSON.stringify(e.details))
  }
}

export function createEmbeddedAuditLogStore(edb: EmbeddedDb): AuditLogStore {
  const { db } = edb
  const append = auditAppender(edb)
  const first = db.prepare('SELECT * FROM audit_log WHERE account_id = ? ORDER BY id DESC LIMIT ?')
  const older = db.prepare('SELECT * FROM audit_log WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?')
  const newer = db.prepare('SELECT * FROM audit_log WHERE account_id = ? AND id > ? ORDER BY id ASC LIMIT ?')
  // whether anything lies beyond a page on the side it was not read from: one row of the primary key
  const anyFrom = db.prepare('SELECT 1 FROM audit_log WHERE account_id = ? AND id >= ? LIMIT 1')
  const anyUpTo = db.prepare('SELECT 1 FROM audit_log WHERE account_id = ? AND id <= ? LIMIT 1')
  return {
    async append(e) {
      append(e)
    },
    async list(accountId, { before, after, limit }) {
      if (after !== undefined && before === undefined) {
        // the newer page: the `limit` entries just above `after`, read upwards, shown newest first
        const rows = newer.all(accountId, after, limit + 1) as unknown as Row[]
        const data = rows.slice(0, limit).map(fromRow).reverse()
        const olderExists = anyUpTo.get(accountId, after) !== undefined
        return {
          data,
          next_before: olderExists ? (data[data.length - 1]?.id ?? null) : null,
          newer_after: rows.length > limit ? data[0]!.id : null,
        }
      }
      // one more than asked: whether an older page exists, without a second query
      const rows = (before === undefined ? first.all(accountId, limit + 1) : older.all(accountId, before, limit + 1)) as unknown as Row[]
      const data = rows.slice(0, limit).map(fromRow)
      const newerExists = before !== undefined && anyFrom.get(accountId, before) !== undefined
      return { data, next_before: rows.length > limit ? data[data.length - 1]!.id : null, newer_after: newerExists ? (data[0]?.id ?? null) : null }
    },
    async close() {},
  }
}

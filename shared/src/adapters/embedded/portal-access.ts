import type { SQLInputValue } from 'node:sqlite'
import type { EmbeddedDb } from './db.ts'
import type { NewPortalSession, PortalAccessStore, PortalLinkRecord, PortalRevealRecord, PortalSessionRecord } from '../../ports/portal-access.ts'

/**
 * Links and sessions in two tables of the embedded database (their own tables, created here).
 * Single use: a redemption reads the link, marks it used and inserts the session inside one
 * BEGIN IMMEDIATE transaction, so no other connection (or process) sharing the file can redeem
 * the same link in between. Records past their `expires_at` are pruned now and then (what the
 * Firestore TTL policy does in the cloud); until then the domain refuses them by their times.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS portal_links (
  token_hash TEXT PRIMARY KEY, account_id TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL,
  used_at TEXT, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS portal_links_account ON portal_links (account_id);
CREATE INDEX IF NOT EXISTS portal_links_expiry ON portal_links (expire_at_ms);
CREATE TABLE IF NOT EXISTS portal_sessions (
  hash TEXT PRIMARY KEY, account_id TEXT NOT NULL, created_at TEXT NOT NULL, last_used_at TEXT NOT NULL,
  expires_at TEXT NOT NULL, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS portal_sessions_account ON portal_sessions (account_id);
CREATE INDEX IF NOT EXISTS portal_sessions_expiry ON portal_sessions (expire_at_ms);
CREATE TABLE IF NOT EXISTS portal_reveals (
  id TEXT PRIMARY KEY, session_hash TEXT NOT NULL, account_id TEXT NOT NULL, created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL, sealed TEXT NOT NULL, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS portal_reveals_account ON portal_reveals (account_id);
CREATE INDEX IF NOT EXISTS portal_reveals_expiry ON portal_reveals (expire_at_ms);
`

/** expired rows are pruned every this many writes */
const PRUNE_EVERY = 500

const LINK_COLUMNS = 'token_hash, account_id, created_at, expires_at, used_at'
const SESSION_COLUMNS = 'hash, account_id, created_at, last_used_at, expires_at'
const REVEAL_COLUMNS = 'id, session_hash, account_id, created_at, expires_at, sealed'

export function createEmbeddedPortalAccessStore(edb: EmbeddedDb): PortalAccessStore {
  const { db } = edb
  db.exec(SCHEMA)
  const statements = new Map<string, ReturnType<typeof db.prepare>>()
  const prepare = (sql: string) => {
    let st = statements.get(sql)
    if (!st) statements.set(sql, (st = db.prepare(sql)))
    return st
  }
  const run = (sql: string, ...params: SQLInputValue[]) => prepare(sql).run(...params)
  const row = <T>(sql: string, ...params: SQLInputValue[]): T | null => {
    const found = prepare(sql).get(...params) as Record<string, unknown> | undefined
    return found ? ({ ...found } as T) : null
  }
  const readLink = (tokenHash: string) => row<PortalLinkRecord>(`SELECT ${LINK_COLUMNS} FROM portal_links WHERE token_hash = ?`, tokenHash)

  let writes = 0
  const maybePrune = (nowMs: number) => {
    if (++writes < PRUNE_EVERY) return
    writes = 0
    run('DELETE FROM portal_links WHERE expire_at_ms <= ?', nowMs)
    run('DELETE FROM portal_sessions WHERE expire_at_ms <= ?', nowMs)
    run('DELETE FROM portal_reveals WHERE expire_at_ms <= ?', nowMs)
  }

  return {
    async createLink(link) {
      edb.transaction(() => {
        maybePrune(Date.parse(link.created_at))
        run(
          `INSERT INTO portal_links (${LINK_COLUMNS}, expire_at_ms) VALUES (?, ?, ?, ?, ?, ?)`,
          link.token_hash,
          link.account_id,
          link.created_at,
          link.expires_at,
          link.used_at,
          Date.parse(link.expires_at),
        )
      })
    },

    async getLink(tokenHash) {
      return readLink(tokenHash)
    },

    async redeemLink(tokenHash: string, session: NewPortalSession): Promise<PortalSessionRecord | null> {
      return edb.transaction(() => {
        const link = readLink(tokenHash)
        if (!link) return null
        // the condition is in the UPDATE itself: whatever ran before, only one statement can claim the link
        const claimed = run(
          'UPDATE portal_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expire_at_ms > ?',
          session.at,
          tokenHash,
          Date.parse(session.at),
        )
        if (Number(claimed.changes) !== 1) return null
        const record: PortalSessionRecord = {
          hash: session.hash,
          account_id: link.account_id,
          created_at: session.at,
          last_used_at: session.at,
          expires_at: session.expires_at,
        }
        run(
          `INSERT INTO portal_sessions (${SESSION_COLUMNS}, expire_at_ms) VALUES (?, ?, ?, ?, ?, ?)`,
          record.hash,
          record.account_id,
          record.created_at,
          record.last_used_at,
          record.expires_at,
          Date.parse(record.expires_at),
        )
        return record
      })
    },

    async getSession(hash) {
      return row<PortalSessionRecord>(`SELECT ${SESSION_COLUMNS} FROM portal_sessions WHERE hash = ?`, hash)
    },

    async touchSession(hash, at) {
      run('UPDATE portal_sessions SET last_used_at = ? WHERE hash = ?', at, hash)
    },

    async deleteSession(hash) {
      run('DELETE FROM portal_sessions WHERE hash = ?', hash)
    },

    async putReveal(reveal: PortalRevealRecord) {
      edb.transaction(() => {
        maybePrune(Date.parse(reveal.created_at))
        run(
          `INSERT INTO portal_reveals (${REVEAL_COLUMNS}, expire_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          reveal.id,
          reveal.session_hash,
          reveal.account_id,
          reveal.created_at,
          reveal.expires_at,
          reveal.sealed,
          Date.parse(reveal.expires_at),
        )
      })
    },

    async takeReveal(id, sessionHash) {
      // one statement reads and deletes: of two takers, only one gets the row back
      return row<PortalRevealRecord>(`DELETE FROM portal_reveals WHERE id = ? AND session_hash = ? RETURNING ${REVEAL_COLUMNS}`, id, sessionHash)
    },

    async endAccountSessions(accountId) {
      // one transaction: a redemption runs wholly before it (its session is deleted here) or after (its link is gone)
      edb.transaction(() => {
        run('DELETE FROM portal_links WHERE account_id = ? AND used_at IS NULL', accountId)
        run('DELETE FROM portal_sessions WHERE account_id = ?', accountId)
        run('DELETE FROM portal_reveals WHERE account_id = ?', accountId)
      })
    },

    async deleteAccountData(accountId) {
      edb.transaction(() => {
        run('DELETE FROM portal_links WHERE account_id = ?', accountId)
        run('DELETE FROM portal_sessions WHERE account_id = ?', accountId)
        run('DELETE FROM portal_reveals WHERE account_id = ?', accountId)
      })
    },

    // the database handle belongs to whoever opened it
    async close() {},
  }
}

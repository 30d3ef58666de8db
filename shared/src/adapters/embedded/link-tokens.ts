import type { EmbeddedDb } from './db.ts'
import type { LinkTokenRecord } from '../../model/records.ts'
import type { LinkTokenStore } from '../../ports/link-tokens.ts'
import { jsonStatements } from './statements.ts'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS link_tokens (hash TEXT PRIMARY KEY, account_id TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS link_tokens_account ON link_tokens (account_id);
`

export function createEmbeddedLinkTokens(edb: EmbeddedDb): LinkTokenStore {
  edb.db.exec(SCHEMA)
  const { one, run } = jsonStatements(edb.db)
  return {
    async put(record: LinkTokenRecord) {
      run('INSERT OR REPLACE INTO link_tokens (hash, account_id, data) VALUES (?, ?, ?)', record.hash, record.account_id, JSON.stringify(record))
    },
    async get(hash) {
      return one<LinkTokenRecord>('SELECT data FROM link_tokens WHERE hash = ?', hash)
    },
    async deleteAccountData(accountId) {
      run('DELETE FROM link_tokens WHERE account_id = ?', accountId)
    },
    // the database handle belongs to whoever opened it (PlatformDeps closes it)
    async close() {},
  }
}

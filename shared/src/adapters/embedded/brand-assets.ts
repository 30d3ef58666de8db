import { createHash } from 'node:crypto'
import type { EmbeddedDb } from './db.ts'
import type { BrandAssets, LogoContentType } from '../../ports/brand-assets.ts'

/**
 * `brand_assets`, keyed (account, id): a read names both, so another account's id finds nothing.
 * The bytes are a BLOB (at most the 64 KiB the upload allows: domain/tenants/logo.ts).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS brand_assets (
  account_id TEXT NOT NULL, id TEXT NOT NULL, content_type TEXT NOT NULL, bytes BLOB NOT NULL,
  PRIMARY KEY (account_id, id)) WITHOUT ROWID;
`

export function createEmbeddedBrandAssets(edb: EmbeddedDb): BrandAssets {
  const { db } = edb
  db.exec(SCHEMA)
  const insert = db.prepare('INSERT OR REPLACE INTO brand_assets (account_id, id, content_type, bytes) VALUES (?, ?, ?, ?)')
  const select = db.prepare('SELECT content_type, bytes FROM brand_assets WHERE account_id = ? AND id = ?')
  const remove = db.prepare('DELETE FROM brand_assets WHERE account_id = ? AND id = ?')
  return {
    async put(accountId, bytes, contentType) {
      const id = createHash('sha256').update(bytes).digest('hex')
      insert.run(accountId, id, contentType, bytes)
      return id
    },
    async get(accountId, id) {
      const row = select.get(accountId, id) as { content_type: LogoContentType; bytes: Uint8Array } | undefined
      return row ? { id, content_type: row.content_type, bytes: new Uint8Array(row.bytes) } : null
    },
    async delete(accountId, id) {
      remove.run(accountId, id)
    },
    // the database handle belongs to whoever opened it (PlatformDeps closes it)
    async close() {},
  }
}

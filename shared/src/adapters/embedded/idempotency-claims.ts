import type { EmbeddedDb } from './db.ts'
import type { IdempotencyClaims } from '../../ports/idempotency-claims.ts'
import { jsonStatements } from './statements.ts'

/** the table keeps its name from when the tenant store held the claims (existing data folders) */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenant_claims (key TEXT PRIMARY KEY, expire_at_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_claims_expiry ON tenant_claims (expire_at_ms);
`

/** expired claims are pruned every this many claims (what Firestore's TTL policy does in the cloud) */
const CLAIM_PRUNE_EVERY = 1000

export function createEmbeddedIdempotencyClaims(edb: EmbeddedDb): IdempotencyClaims {
  edb.db.exec(SCHEMA)
  const { prepare, run } = jsonStatements(edb.db)
  let claimsSincePrune = 0
  return {
    async claimOnce(key, ttlSeconds, nowMs = Date.now()) {
      if (++claimsSincePrune >= CLAIM_PRUNE_EVERY) {
        claimsSincePrune = 0
        run(`DELETE FROM tenant_claims WHERE expire_at_ms <= ?`, nowMs)
      }
      // BEGIN IMMEDIATE: two handles on the file cannot both see the key free
      return edb.transaction(() => {
        const row = prepare(`SELECT expire_at_ms FROM tenant_claims WHERE key = ?`).get(key) as { expire_at_ms: number } | undefined
        if (row && row.expire_at_ms > nowMs) return false
        run(`INSERT OR REPLACE INTO tenant_claims (key, expire_at_ms) VALUES (?, ?)`, key, nowMs + ttlSeconds * 1000)
        return true
      })
    },
    async close() {
      // the database belongs to the platform deps, which close it after every adapter
    },
  }
}

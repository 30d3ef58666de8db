import type { EmbeddedDb } from './db.ts'
import type { TenantConfigVersion } from '../../ports/tenant-lookups.ts'
import { TENANT_CONFIG_VERSION_TABLE } from './tenant-store.ts'

/**
 * How stale a cached tenant lookup may be when another connection to the file (another process,
 * or a worker thread) made the change: 10 ms. The check is a synchronous point read of one row
 * (≈ 7 µs, about what the lookup it saves costs), so it runs at most once per bound, not per lookup.
 */
export const EMBEDDED_TENANT_VERSION_BOUND_MS = 10

/**
 * The embedded tenant configuration version: the row the tenant tables' triggers bump
 * (tenant-store.ts), read again inline when the last read started more than `boundMs` ago. A read
 * transaction sees every commit made before it started, by any connection, so the version it
 * returns covers every write committed before then. `now` is a monotonic clock in ms.
 */
export function createEmbeddedTenantConfigVersion(edb: EmbeddedDb, options: { boundMs?: number; now?: () => number } = {}): TenantConfigVersion {
  const boundMs = options.boundMs ?? EMBEDDED_TENANT_VERSION_BOUND_MS
  const now = options.now ?? (() => performance.now())
  // the tenant store creates the table with its triggers; this reader may be built first
  edb.db.exec(`CREATE TABLE IF NOT EXISTS ${TENANT_CONFIG_VERSION_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`)
  const select = edb.db.prepare(`SELECT version FROM ${TENANT_CONFIG_VERSION_TABLE} WHERE id = 1`)
  let version: number | null = null
  let readAt = -Infinity
  return {
    boundMs,
    confirmed() {
      const started = now()
      if (started - readAt <= boundMs) return version
      try {
        const row = select.get() as { version: number } | undefined
        version = row?.version ?? 0
        readAt = started
        return version
      } catch {
        // the database is closing or failing: nothing is confirmed, lookups go to the store
        return null
      }
    },
  }
}

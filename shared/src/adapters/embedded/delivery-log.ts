import type { EmbeddedDb } from './db.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import type { DeliveryLog } from '../../ports/delivery-log.ts'
import { jsonStatements } from './statements.ts'

/** the table keeps its name from when the tenant store held the log (existing data folders) */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenant_deliveries (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, integration_id TEXT NOT NULL,
  created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_deliveries_page ON tenant_deliveries (integration_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS tenant_deliveries_account ON tenant_deliveries (account_id);
`

export function createEmbeddedDeliveryLog(edb: EmbeddedDb): DeliveryLog {
  edb.db.exec(SCHEMA)
  const { prepare, one, many, run } = jsonStatements(edb.db)
  return {
    async put(d: DeliveryRecord) {
      const data = JSON.stringify(d)
      // the delivery log is written once per attempt by many deliveries at once: their writes
      // share one commit (resolved only once it is committed)
      await edb.groupCommit(() => run(
        // an update in place: the indexed columns of a delivery never change after its creation
        `INSERT INTO tenant_deliveries (id, account_id, integration_id, created_at, data) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data`,
        d.id, d.account_id, d.integration_id, d.created_at, data,
      ))
    },
    async get(id) {
      return one<DeliveryRecord>(`SELECT data FROM tenant_deliveries WHERE id = ?`, id)
    },
    async list(integrationId, { before, limit }) {
      if (before === undefined) {
        return many<DeliveryRecord>(
          `SELECT data FROM tenant_deliveries WHERE integration_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, integrationId, limit)
      }
      const cursor = prepare(`SELECT created_at FROM tenant_deliveries WHERE id = ? AND integration_id = ?`)
        .get(before, integrationId) as { created_at: string } | undefined
      // an unknown cursor (expired or foreign) ends the listing rather than restarting it
      if (!cursor) return []
      return many<DeliveryRecord>(
        `SELECT data FROM tenant_deliveries WHERE integration_id = ? AND (created_at < ? OR (created_at = ? AND id < ?))
         ORDER BY created_at DESC, id DESC LIMIT ?`,
        integrationId, cursor.created_at, cursor.created_at, before, limit)
    },
    async deleteAccountData(accountId) {
      run(`DELETE FROM tenant_deliveries WHERE account_id = ?`, accountId)
    },
    async close() {
      // the database belongs to the platform deps, which close it after every adapter
    },
  }
}

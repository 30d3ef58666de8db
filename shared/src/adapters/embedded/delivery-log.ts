import type { EmbeddedDb } from './db.ts'
import type { DeliveryRecord } from '../../model/records.ts'
import type { DeliveryLog } from '../../ports/delivery-log.ts'

/**
 * The table keeps its name from when the tenant store held the log (existing data folders).
 * The body (the exact bytes sent, several KB, never changed once the delivery exists) is kept in a
 * table of its own, written when it differs from what is stored: each attempt then rewrites only
 * the small record (status, attempts) and many of them share a page, instead of a page per attempt
 * (the commit's WAL write was the largest store cost of a delivery). Rows written before keep
 * their body inside `data` until their next write.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenant_deliveries (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, integration_id TEXT NOT NULL,
  created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_deliveries_page ON tenant_deliveries (integration_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS tenant_deliveries_account ON tenant_deliveries (account_id);
CREATE TABLE IF NOT EXISTS tenant_delivery_bodies (id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_deliveries_due ON tenant_deliveries (json_extract(data, '$.next_attempt_at'))
  WHERE json_extract(data, '$.next_attempt_at') IS NOT NULL;
`

interface Row {
  data: string
  body: string | null
}

/** the record of a row: its body from the body table, or (a row written before it) from `data` */
function toRecord(row: Row): DeliveryRecord {
  const record = JSON.parse(row.data) as DeliveryRecord
  if (row.body !== null) record.body = row.body
  return record
}

export function createEmbeddedDeliveryLog(edb: EmbeddedDb): DeliveryLog {
  const { db } = edb
  db.exec(SCHEMA)
  const putBody = db.prepare(
    // no write at all when the stored body is the same (every attempt after the first)
    `INSERT INTO tenant_delivery_bodies (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body WHERE body IS NOT excluded.body`,
  )
  const putRecord = db.prepare(
    // an update in place: the indexed columns of a delivery never change after its creation
    `INSERT INTO tenant_deliveries (id, account_id, integration_id, created_at, data) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET data = excluded.data`,
  )
  const select = `SELECT d.data AS data, b.body AS body FROM tenant_deliveries d LEFT JOIN tenant_delivery_bodies b ON b.id = d.id`
  const getOne = db.prepare(`${select} WHERE d.id = ?`)
  // the time range is always bound (open ends as sentinels: '' sorts before and '~' after every
  // ISO 8601 time), so one statement serves both and the index's range scan stays
  const inRange = `d.created_at >= ? AND d.created_at < ?`
  const firstPage = db.prepare(`${select} WHERE d.integration_id = ? AND ${inRange} ORDER BY d.created_at DESC, d.id DESC LIMIT ?`)
  const cursorOf = db.prepare(`SELECT created_at FROM tenant_deliveries WHERE id = ? AND integration_id = ?`)
  const nextPage = db.prepare(
    `${select} WHERE d.integration_id = ? AND ${inRange} AND (d.created_at < ? OR (d.created_at = ? AND d.id < ?)) ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
  )
  // the partial index above holds only waiting deliveries (done ones have next_attempt_at null)
  const due = db.prepare(
    `${select} WHERE json_extract(d.data, '$.next_attempt_at') IS NOT NULL AND json_extract(d.data, '$.next_attempt_at') < ?
     ORDER BY json_extract(d.data, '$.next_attempt_at'), d.id LIMIT ?`,
  )
  const deleteBodies = db.prepare(`DELETE FROM tenant_delivery_bodies WHERE id IN (SELECT id FROM tenant_deliveries WHERE account_id = ?)`)
  const deleteRecords = db.prepare(`DELETE FROM tenant_deliveries WHERE account_id = ?`)

  return {
    async put(d: DeliveryRecord) {
      const { body, ...record } = d
      const data = JSON.stringify(record)
      // the delivery log is written once per attempt by many deliveries at once: their writes
      // share one commit (resolved only once it is committed); the body first, so a record is
      // never without one
      await edb.groupCommit(() => {
        putBody.run(d.id, body)
        putRecord.run(d.id, d.account_id, d.integration_id, d.created_at, data)
      })
    },
    async get(id) {
      const row = getOne.get(id) as Row | undefined
      return row ? toRecord(row) : null
    },
    async list(integrationId, { before, limit, createdFrom, createdBefore }) {
      const from = createdFrom ?? ''
      const to = createdBefore ?? '~'
      if (before === undefined) return (firstPage.all(integrationId, from, to, limit) as unknown as Row[]).map(toRecord)
      const cursor = cursorOf.get(before, integrationId) as { created_at: string } | undefined
      // an unknown cursor (expired or foreign) ends the listing rather than restarting it
      if (!cursor) return []
      return (nextPage.all(integrationId, from, to, cursor.created_at, cursor.created_at, before, limit) as unknown as Row[]).map(toRecord)
    },
    async listDue(before, limit) {
      return (due.all(before, limit) as unknown as Row[]).map(toRecord)
    },
    async deleteAccountData(accountId) {
      edb.transaction(() => {
        deleteBodies.run(accountId)
        deleteRecords.run(accountId)
      })
    },
    async close() {
      // the database belongs to the platform deps, which close it after every adapter
    },
  }
}

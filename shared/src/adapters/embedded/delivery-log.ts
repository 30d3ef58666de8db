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
 * The status stays inside `data`: an index on its expression serves the listing and counts by
 * status (queries must spell it exactly as the index does), with no column to migrate or keep in
 * step; a data folder from before gets the index when it is opened (IF NOT EXISTS builds it).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenant_deliveries (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, integration_id TEXT NOT NULL,
  created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_deliveries_page ON tenant_deliveries (integration_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS tenant_deliveries_account ON tenant_deliveries (account_id);
CREATE TABLE IF NOT EXISTS tenant_delivery_bodies (id TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_deliveries_status ON tenant_deliveries (integration_id, json_extract(data, '$.status'), created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS tenant_deliveries_due ON tenant_deliveries (json_extract(data, '$.next_attempt_at'))
  WHERE json_extract(data, '$.next_attempt_at') IS NOT NULL;
`

const SELECT = `SELECT d.data AS data, b.body AS body FROM tenant_deliveries d LEFT JOIN tenant_delivery_bodies b ON b.id = d.id`
// the time range is always bound (open ends as sentinels: '' sorts before and '~' after every
// ISO 8601 time), so one statement serves both and the index's range scan stays
const IN_RANGE = `d.created_at >= ? AND d.created_at < ?`
// narrowed to one status, spelled as tenant_deliveries_status spells it (else SQLite scans)
const BY_STATUS = `d.integration_id = ? AND json_extract(d.data, '$.status') = ? AND ${IN_RANGE}`

/** The statements narrowed to one status (exported for the test that checks SQLite's plan for them). */
export const STATUS_SQL = {
  firstPage: `${SELECT} WHERE ${BY_STATUS} ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
  nextPage: `${SELECT} WHERE ${BY_STATUS} AND (d.created_at < ? OR (d.created_at = ? AND d.id < ?)) ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
  // the inner LIMIT stops at the cap; the index covers the query (no record is read)
  count: `SELECT count(*) AS n FROM (SELECT 1 FROM tenant_deliveries d WHERE ${BY_STATUS} LIMIT ?)`,
}

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
    // an update in place: the indexed columns of a delivery never change after its creation (the
    // status and next_attempt_at indexes, on expressions of `data`, follow it)
    `INSERT INTO tenant_deliveries (id, account_id, integration_id, created_at, data) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET data = excluded.data`,
  )
  const getOne = db.prepare(`${SELECT} WHERE d.id = ?`)
  const firstPage = db.prepare(`${SELECT} WHERE d.integration_id = ? AND ${IN_RANGE} ORDER BY d.created_at DESC, d.id DESC LIMIT ?`)
  const cursorOf = db.prepare(`SELECT created_at FROM tenant_deliveries WHERE id = ? AND integration_id = ?`)
  const nextPage = db.prepare(
    `${SELECT} WHERE d.integration_id = ? AND ${IN_RANGE} AND (d.created_at < ? OR (d.created_at = ? AND d.id < ?)) ORDER BY d.created_at DESC, d.id DESC LIMIT ?`,
  )
  // the same pages narrowed to one status: tenant_deliveries_status serves them
  const firstStatusPage = db.prepare(STATUS_SQL.firstPage)
  const nextStatusPage = db.prepare(STATUS_SQL.nextPage)
  const countStatus = db.prepare(STATUS_SQL.count)
  // the partial index above holds only waiting deliveries (done ones have next_attempt_at null)
  const due = db.prepare(
    `${SELECT} WHERE json_extract(d.data, '$.next_attempt_at') IS NOT NULL AND json_extract(d.data, '$.next_attempt_at') < ?
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
    async list(integrationId, { before, limit, createdFrom, createdBefore, status }) {
      // the leading bound values: the integration, then (narrowed) the status, then the range
      const lead = status === undefined ? [integrationId] : [integrationId, status]
      const range = [createdFrom ?? '', createdBefore ?? '~']
      if (before === undefined) {
        const stmt = status === undefined ? firstPage : firstStatusPage
        return (stmt.all(...lead, ...range, limit) as unknown as Row[]).map(toRecord)
      }
      // the cursor is a position (time, id), whatever the status of its row is now
      const cursor = cursorOf.get(before, integrationId) as { created_at: string } | undefined
      // an unknown cursor (expired or foreign) ends the listing rather than restarting it
      if (!cursor) return []
      const stmt = status === undefined ? nextPage : nextStatusPage
      return (stmt.all(...lead, ...range, cursor.created_at, cursor.created_at, before, limit) as unknown as Row[]).map(toRecord)
    },
    async countByStatus(integrationId, { createdFrom, createdBefore, cap }) {
      const count = (status: DeliveryRecord['status']) =>
        (countStatus.get(integrationId, status, createdFrom ?? '', createdBefore ?? '~', cap) as { n: number }).n
      return { pending: count('pending'), retrying: count('retrying'), succeeded: count('succeeded'), failed: count('failed') }
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

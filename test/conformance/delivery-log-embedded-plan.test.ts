import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedDeliveryLog, STATUS_SQL } from '@lsv/shared/adapters/embedded/delivery-log.ts'
import type { DeliveryLog } from '@lsv/shared/ports/delivery-log.ts'
import { tempDataDir } from '../helpers/embedded.ts'

/**
 * The embedded delivery log narrowed to one status (the portal's status filter, recover's failed
 * deliveries, its progress counts) searches the (integration, status, time) index and never
 * walks the integration's deliveries (SQLite's own plan, not a timing). Before it, recover read
 * up to 5000 whole records to find the failed ones: ~30 ms p50 on bench:portal's 100,000.
 */
describe('delivery log (embedded): the status listing and counts use their index', () => {
  let dir: ReturnType<typeof tempDataDir>
  let edb: EmbeddedDb
  let log: DeliveryLog
  beforeAll(() => {
    dir = tempDataDir()
    edb = openEmbeddedDb(dir.dir)
    log = createEmbeddedDeliveryLog(edb)
  })
  afterAll(async () => {
    await log?.close()
    await edb?.close()
    dir?.cleanup()
  })

  const plan = (sql: string) => (edb.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('; ')
  // mutation: spelling the status expression differently in STATUS_SQL (e.g. `d.data ->> 'status'`)
  // or dropping tenant_deliveries_status from the schema turns these into the page index plus a
  // row test, or a SCAN
  const searchesStatusIndex =
    /^SEARCH d USING (COVERING )?INDEX tenant_deliveries_status \(integration_id=\? AND <expr>=\? AND created_at>\? AND created_at<\?\)/

  it('first and next page: the status index, in its order (no sort, no scan)', () => {
    for (const sql of [STATUS_SQL.firstPage, STATUS_SQL.nextPage]) {
      const detail = plan(sql)
      expect(detail).toMatch(searchesStatusIndex)
      expect(detail).not.toMatch(/SCAN|TEMP B-TREE/)
    }
  })

  it('the capped count: the status index alone (covering: no record is read)', () => {
    const detail = plan(STATUS_SQL.count)
    expect(detail).toContain('SEARCH d USING COVERING INDEX tenant_deliveries_status')
    expect(detail).not.toMatch(/SCAN tenant_deliveries|SCAN d\b/)
  })

  it('a data folder from before the index gets it when opened again', async () => {
    edb.db.exec('DROP INDEX tenant_deliveries_status')
    createEmbeddedDeliveryLog(edb)
    expect(plan(STATUS_SQL.firstPage)).toMatch(searchesStatusIndex)
  })
})

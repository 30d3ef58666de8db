import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedContactStore, LOOKUP_SQL } from '@lsv/shared/adapters/embedded/contact-store.ts'
import type { ContactStore } from '@lsv/shared/ports/contact-store.ts'
import { tempDataDir } from '../helpers/embedded.ts'

/**
 * The embedded store's lookups by email and by network URL search their index, never walk every
 * contact of the account (SQLite's own plan, not a timing). Without INDEXED BY the planner answered
 * `ORDER BY id LIMIT 1` with the primary key: a full scan of the account, 280 ms p99 for the
 * portal's email lookup at 100,000 contacts (bench/portal.ts, docs/performance.md).
 */
describe('contact store (embedded): lookups use their index', () => {
  let dir: ReturnType<typeof tempDataDir>
  let edb: EmbeddedDb
  let store: ContactStore
  beforeAll(() => {
    dir = tempDataDir()
    edb = openEmbeddedDb(dir.dir)
    store = createEmbeddedContactStore(edb)
  })
  afterAll(async () => {
    await store?.close()
    edb?.close()
    dir?.cleanup()
  })

  const plan = (sql: string) => (edb.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('acc', 'x') as Array<{ detail: string }>).map((r) => r.detail).join('; ')

  it('by business email: the (account_id, business_email) index, both columns bound', () => {
    expect(plan(LOOKUP_SQL.byEmail)).toMatch(/^SEARCH contacts USING INDEX contacts_business_email \(account_id=\? AND business_email=\?\)$/)
  })

  it('by network URL: the (account_id, network_url) index, both columns bound', () => {
    expect(plan(LOOKUP_SQL.byNetworkUrl)).toMatch(/^SEARCH contacts USING INDEX contacts_network_url \(account_id=\? AND network_url=\?\)$/)
  })
})

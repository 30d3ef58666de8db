import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedDeliveryLog } from '@lsv/shared/adapters/embedded/delivery-log.ts'
import type { DeliveryLog } from '@lsv/shared/ports/delivery-log.ts'
import { tempDataDir, randomSuffix } from '../helpers/embedded.ts'
import { delivery } from './suites/tenant-store.ts'

/**
 * The embedded delivery log's layout (shared/src/adapters/embedded/delivery-log.ts): the body is
 * stored once, in a table of its own, so an attempt rewrites only the small record; rows written
 * by the earlier layout (the body inside `data`) still read whole. The port's behaviour:
 * delivery-log.test.ts.
 */
describe('embedded delivery log layout', () => {
  let dir: ReturnType<typeof tempDataDir>
  let edb: EmbeddedDb
  let log: DeliveryLog
  beforeAll(() => {
    dir = tempDataDir()
    edb = openEmbeddedDb(dir.dir)
    log = createEmbeddedDeliveryLog(edb)
    edb.db.exec(`CREATE TEMP TABLE body_writes (id TEXT);
      CREATE TEMP TRIGGER body_updated AFTER UPDATE ON main.tenant_delivery_bodies BEGIN INSERT INTO body_writes VALUES (new.id); END;
      CREATE TEMP TRIGGER body_inserted AFTER INSERT ON main.tenant_delivery_bodies BEGIN INSERT INTO body_writes VALUES (new.id); END;`)
  })
  afterAll(async () => {
    await edb.close()
    dir.cleanup()
  })
  const bodyWrites = (id: string) => (edb.db.prepare('SELECT count(*) AS n FROM body_writes WHERE id = ?').get(id) as { n: number }).n
  const storedData = (id: string) =>
    JSON.parse((edb.db.prepare('SELECT data FROM tenant_deliveries WHERE id = ?').get(id) as { data: string }).data) as Record<string, unknown>

  it('writes the body once: attempts rewrite the record without it', async () => {
    const d = delivery(`acc-${randomSuffix()}`, `int-${randomSuffix()}`, { body: JSON.stringify({ big: 'x'.repeat(3000) }) })
    await log.put(d)
    const attempted = {
      ...d,
      status: 'retrying' as const,
      attempts: [{ attempt: 1, at: d.created_at, status_code: 500, error: null, latency_ms: 4, response_excerpt: null }],
    }
    await log.put(attempted)
    await log.put({ ...attempted, status: 'failed' as const })
    expect(bodyWrites(d.id)).toBe(1)
    expect(storedData(d.id)).not.toHaveProperty('body')
    expect(await log.get(d.id)).toEqual({ ...attempted, status: 'failed' })
    // a put with another body stores it (the port replaces the record)
    await log.put({ ...attempted, body: '{"other":true}' })
    expect(bodyWrites(d.id)).toBe(2)
    expect((await log.get(d.id))!.body).toBe('{"other":true}')
  })

  it('reads a row of the earlier layout (its body inside the record), and moves the body out on its next write', async () => {
    const d = delivery(`acc-${randomSuffix()}`, `int-${randomSuffix()}`, { body: '{"legacy":1}' })
    edb.db
      .prepare('INSERT INTO tenant_deliveries (id, account_id, integration_id, created_at, data) VALUES (?, ?, ?, ?, ?)')
      .run(d.id, d.account_id, d.integration_id, d.created_at, JSON.stringify(d))
    expect(await log.get(d.id)).toEqual(d)
    expect(await log.list(d.integration_id, { limit: 5 })).toEqual([d])
    const done = { ...d, status: 'succeeded' as const }
    await log.put(done)
    expect(storedData(d.id)).not.toHaveProperty('body')
    expect(await log.get(d.id)).toEqual(done)
  })

  it("deletes an account's bodies with its deliveries", async () => {
    const account = `acc-${randomSuffix()}`
    const d = delivery(account, `int-${randomSuffix()}`)
    await log.put(d)
    await log.deleteAccountData(account)
    expect(await log.get(d.id)).toBeNull()
    expect(edb.db.prepare('SELECT count(*) AS n FROM tenant_delivery_bodies WHERE id = ?').get(d.id)).toEqual({ n: 0 })
  })
})

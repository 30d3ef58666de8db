import { afterEach, describe, expect, it } from 'vitest'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createEmbeddedTenantConfigVersion, EMBEDDED_TENANT_VERSION_BOUND_MS } from '@lsv/shared/adapters/embedded/tenant-config-version.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { account } from '../conformance/suites/tenant-store.ts'

/**
 * The embedded tenant configuration version (shared/src/adapters/embedded/tenant-config-version.ts)
 * beyond what every version source does (test/conformance/tenant-config-version.test.ts): the
 * bound is inclusive and read from a clock the test moves, the reader works on a folder no tenant
 * store has written yet, and a closed database confirms nothing.
 */
describe('embedded tenant configuration version', () => {
  const opened: Array<{ db: EmbeddedDb; cleanup(): void }> = []
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.db.close()
      o.cleanup()
    }
  })
  function fresh() {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    opened.push({ db, cleanup: dir.cleanup })
    return db
  }

  it('on a folder without tenant tables yet: version 0, confirmed', () => {
    const version = createEmbeddedTenantConfigVersion(fresh(), { now: () => 0 })
    expect(version.confirmed()).toBe(0)
  })

  it('bounds staleness by 10 ms by default', () => {
    expect(EMBEDDED_TENANT_VERSION_BOUND_MS).toBe(10)
    expect(createEmbeddedTenantConfigVersion(fresh()).boundMs).toBe(EMBEDDED_TENANT_VERSION_BOUND_MS)
  })

  it('answers from its last read up to the bound inclusive, and reads again after it', async () => {
    const db = fresh()
    const store = createEmbeddedTenantStore(db)
    let now = 1_000
    const version = createEmbeddedTenantConfigVersion(db, { boundMs: 10, now: () => now })
    const first = version.confirmed()
    expect(first).not.toBeNull()
    await store.createAccount(account())
    now = 1_010 // exactly the bound after the read: still the answer of that read
    expect(version.confirmed()).toBe(first)
    now = 1_011
    expect(version.confirmed()).toBeGreaterThan(first!)
  })

  it('confirms nothing once its database is closed (lookups then go to the store)', async () => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    let now = 0
    const version = createEmbeddedTenantConfigVersion(db, { now: () => now })
    expect(version.confirmed()).toBe(0)
    await db.close()
    dir.cleanup()
    now = 1_000
    expect(version.confirmed()).toBeNull()
  })
})

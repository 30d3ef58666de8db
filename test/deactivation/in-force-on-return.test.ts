import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import type { TenantConfigVersion } from '@lsv/shared/ports/tenant-lookups.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createEmbeddedTenantConfigVersion } from '@lsv/shared/adapters/embedded/tenant-config-version.ts'
import { createFirestoreTenantStore } from '@lsv/shared/adapters/google/firestore-tenant-store.ts'
import { createFirestoreTenantConfigVersion } from '@lsv/shared/adapters/google/firestore-tenant-config-version.ts'
import { createHarness, type Harness } from '../ingest/support/harness.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { OPERATOR } from '../management/harness.ts'
import { emulators } from '../helpers/embedded.ts'
import { fakeMonotonic } from './fake-monotonic.ts'
import { ACCESS_CHANGES, type Admin, type CaseTenant, type Push } from './cases.ts'

/**
 * "When the call returns, it is in force on every instance" (issue 20 item 6), without timing:
 * instance A serves pushes from its lookup cache; instance B, another instance over the same
 * store, makes the management call. A's version source and B's write wait run on one fake
 * monotonic clock that only B's wait moves, so A may answer from memory exactly as long as the
 * bound allows and no longer. Right after B's call returns, A must answer the new way.
 *
 * The control, instance B0, is B as the composition root built it before the wait existed (its
 * management API writes to the store directly: no settleTenantWrites in shared/src/platform/deps-stores.ts).
 * After B0's call returns, A still answers the old way: the guarantee comes from the wait alone,
 * and removing it (or waiting `boundMs` instead of more) fails the "in force" half of each case.
 */

/** until A's version is confirmed (Firestore reads it in the background): only then may A cache */
async function confirmed(version: TenantConfigVersion): Promise<void> {
  while (version.confirmed() === null) await new Promise((r) => setTimeout(r, 5))
}

const BACKENDS = [
  { name: 'embedded: handles on one data folder', backend: 'embedded' as const, skip: false },
  { name: 'Firestore emulator: separate clients', backend: 'emulators' as const, skip: !emulators.firestore || !emulators.pubsub },
]

for (const { name, backend, skip } of BACKENDS) {
  describe.skipIf(skip)(`an access change is in force on another instance when the call returns (${name})`, () => {
    const clock = fakeMonotonic()
    let a: Harness
    let b: Harness
    let b0: Harness
    let versionA: TenantConfigVersion
    let release: () => Promise<void>
    beforeAll(async () => {
      b = await createHarness({ backend, tenantWriteTimer: clock })
      let direct: TenantStore
      if (backend === 'embedded') {
        const edb: EmbeddedDb = openEmbeddedDb(b.deps.config.dataDir)
        versionA = createEmbeddedTenantConfigVersion(edb, { now: clock.now })
        direct = createEmbeddedTenantStore(edb)
        release = () => edb.close()
      } else {
        const fs = new Firestore({ projectId: emulators.project, ignoreUndefinedProperties: true })
        versionA = createFirestoreTenantConfigVersion(fs, { now: clock.now })
        direct = createFirestoreTenantStore(fs)
        release = () => fs.terminate()
      }
      const same = backend === 'embedded' ? { env: { DATA_DIR: b.deps.config.dataDir } } : {}
      a = await createHarness({ backend, ...same, tenantConfigVersion: versionA })
      b0 = await createHarness({ backend, ...same, tenants: direct })
    })
    afterAll(async () => {
      for (const h of [a, b0]) await h?.close()
      await release?.()
      await b?.close()
    })

    const admin =
      (h: Harness): Admin =>
      async (method, url, payload) => {
        const res = await h.portal.inject({ method, url, headers: OPERATOR, ...(payload ? { payload } : {}) })
        return { status: res.statusCode, body: res.body === '' ? null : res.json() }
      }
    const pushTo =
      (h: Harness, host: string): Push =>
      async (path, headers, payload) =>
        (await h.edge.inject({ method: 'POST', url: path, headers: { host, 'content-type': 'application/json', ...headers }, payload })).statusCode

    it.each(ACCESS_CHANGES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
      for (const [writer, inForce] of [
        [b0, false],
        [b, true],
      ] as const) {
        const stored = await createTestTenant(b.deps, c.spec)
        const t: CaseTenant = { ...stored }
        try {
          await c.setup?.(admin(b), t)
          await confirmed(versionA)
          const push = pushTo(a, stored.host)
          // A answers, and has read what it answered from into its cache
          expect([await c.push(push, t), await c.push(push, t)]).toEqual([c.was, c.was])
          await c.change(admin(writer), t)
          expect(await c.push(push, t), inForce ? 'through B (with the wait)' : 'through B0 (control: no wait)').toBe(inForce ? c.becomes : c.was)
        } finally {
          await stored.cleanup().catch(() => {})
        }
      }
    })
  })
}

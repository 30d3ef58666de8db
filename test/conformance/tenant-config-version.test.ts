import { describe } from 'vitest'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createEmbeddedTenantConfigVersion } from '@lsv/shared/adapters/embedded/tenant-config-version.ts'
import { createFirestoreTenantStore } from '@lsv/shared/adapters/google/firestore-tenant-store.ts'
import { createFirestoreTenantConfigVersion } from '@lsv/shared/adapters/google/firestore-tenant-config-version.ts'
import { twoEmbeddedInstances, twoFirestoreInstances } from './suites/two-instances.ts'
import { tenantConfigVersionConformance } from './suites/tenant-config-version.ts'

describe('tenant configuration version: embedded (two handles on one file)', () => {
  tenantConfigVersionConformance(() =>
    twoEmbeddedInstances((db) => {
      const store = createEmbeddedTenantStore(db)
      return { store, version: (boundMs, now) => createEmbeddedTenantConfigVersion(db, { boundMs, ...(now ? { now } : {}) }), close: () => store.close() }
    }),
  )
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('tenant configuration version: Firestore emulator (two clients)', () => {
  tenantConfigVersionConformance(() =>
    twoFirestoreInstances((fs) => {
      const store = createFirestoreTenantStore(fs)
      return { store, version: (boundMs, now) => createFirestoreTenantConfigVersion(fs, { boundMs, ...(now ? { now } : {}) }), close: () => store.close() }
    }),
  )
})

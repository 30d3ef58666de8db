import { describe } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createFirestoreTenantStore } from '@lsv/shared/adapters/google/firestore-tenant-store.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { tenantStoreConformance } from './suites/tenant-store.ts'

describe('tenant store: embedded (node:sqlite)', () => {
  tenantStoreConformance(async () => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    const store = createEmbeddedTenantStore(db)
    return {
      store,
      async close() {
        await store.close()
        db.close()
        dir.cleanup()
      },
    }
  })
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('tenant store: Firestore emulator', () => {
  tenantStoreConformance(async () => {
    const firestore = new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    const store = createFirestoreTenantStore(firestore)
    return {
      store,
      async close() {
        await store.close()
        await firestore.terminate()
      },
    }
  })
})

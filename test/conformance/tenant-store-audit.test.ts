import { describe } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createEmbeddedAuditLogStore } from '@lsv/shared/adapters/embedded/audit-log.ts'
import { createFirestoreTenantStore } from '@lsv/shared/adapters/google/firestore-tenant-store.ts'
import { createFirestoreAuditLogStore } from '@lsv/shared/adapters/google/firestore-audit-log.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { auditedTenantStoreConformance } from './suites/tenant-store-audit.ts'

describe('tenant store writes with their audit entries: embedded (node:sqlite)', () => {
  auditedTenantStoreConformance(async () => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    return {
      tenants: createEmbeddedTenantStore(db),
      auditLog: createEmbeddedAuditLogStore(db),
      async close() {
        db.close()
        dir.cleanup()
      },
    }
  })
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('tenant store writes with their audit entries: Firestore emulator', () => {
  auditedTenantStoreConformance(async () => {
    const fs = new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    return {
      tenants: createFirestoreTenantStore(fs),
      auditLog: createFirestoreAuditLogStore(fs),
      close: () => fs.terminate(),
    }
  })
})

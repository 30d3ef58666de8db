import { describe } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { openEmbeddedDb } from '@lsv/shared/embedded/db.ts'
import { createEmbeddedAuditLogStore } from '@lsv/shared/ports/audit-log/embedded.ts'
import { createFirestoreAuditLogStore } from '@lsv/shared/ports/audit-log/firestore.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { auditLogConformance } from './suites/audit-log.ts'

describe('audit log store: embedded (node:sqlite), two handles on one file', () => {
  auditLogConformance(async () => {
    const dir = tempDataDir()
    const dbs = [openEmbeddedDb(dir.dir), openEmbeddedDb(dir.dir)]
    const [store, other] = dbs.map((db) => createEmbeddedAuditLogStore(db))
    return {
      store: store!,
      other: other!,
      async close() {
        for (const s of [store!, other!]) await s.close()
        for (const db of dbs) db.close()
        dir.cleanup()
      },
    }
  })
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('audit log store: Firestore emulator, two clients', () => {
  auditLogConformance(async () => {
    const clients = [0, 1].map(() => new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' }))
    const [store, other] = clients.map((fs) => createFirestoreAuditLogStore(fs))
    return {
      store: store!,
      other: other!,
      async close() {
        for (const s of [store!, other!]) await s.close()
        for (const c of clients) await c.terminate()
      },
    }
  })
})

import { describe } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { openEmbeddedDb } from '@lsv/shared/embedded/db.ts'
import { createEmbeddedPortalAccessStore } from '@lsv/shared/ports/portal-access/embedded.ts'
import { createFirestorePortalAccessStore } from '@lsv/shared/ports/portal-access/firestore.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { portalAccessConformance } from './suites/portal-access.ts'

describe('portal access store: embedded (node:sqlite), two handles on one file', () => {
  portalAccessConformance(async () => {
    const dir = tempDataDir()
    const dbs = [openEmbeddedDb(dir.dir), openEmbeddedDb(dir.dir)]
    const [store, other] = dbs.map((db) => createEmbeddedPortalAccessStore(db))
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

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('portal access store: Firestore emulator, two clients', () => {
  portalAccessConformance(async () => {
    const clients = [0, 1].map(() => new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' }))
    const [store, other] = clients.map((fs) => createFirestorePortalAccessStore(fs))
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

import { describe } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedContactStore } from '@lsv/shared/adapters/embedded/contact-store.ts'
import { createFirestoreContactStore } from '@lsv/shared/adapters/google/firestore-contact-store.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { contactStoreConformance } from './suites/contact-store.ts'

describe('contact store: embedded (node:sqlite)', () => {
  contactStoreConformance(async () => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    const store = createEmbeddedContactStore(db)
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

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('contact store: Firestore emulator', () => {
  contactStoreConformance(async () => {
    const firestore = new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    const store = createFirestoreContactStore(firestore)
    return {
      store,
      async close() {
        await store.close()
        await firestore.terminate()
      },
    }
  })
})

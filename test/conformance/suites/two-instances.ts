import { randomBytes } from 'node:crypto'
import { Firestore } from '@google-cloud/firestore'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { tempDataDir } from '../../helpers/embedded.ts'

/** What a port's conformance suite gets: the store under test, a second instance over the same data, and a closer. */
export interface TwoInstances<S> {
  store: S
  other: S
  close(): Promise<void>
}

interface Closable {
  close(): Promise<void>
}

/**
 * Two instances of an embedded adapter on two handles of one database file, as two processes of
 * `npm start` sharing one data folder would open it.
 */
export async function twoEmbeddedInstances<S extends Closable>(make: (db: EmbeddedDb) => S): Promise<TwoInstances<S>> {
  const dir = tempDataDir()
  const dbs = [openEmbeddedDb(dir.dir), openEmbeddedDb(dir.dir)]
  const [store, other] = dbs.map((db) => make(db)) as [S, S]
  return {
    store,
    other,
    async close() {
      for (const s of [store, other]) await s.close()
      for (const db of dbs) db.close()
      dir.cleanup()
    },
  }
}

/**
 * Two instances of a Firestore adapter on two clients of the emulator, as two Cloud Run instances
 * would be. They share a project of their own: the emulator keeps each project's data apart, and
 * some ports keep one project-wide document (the tenant configuration version), which other test
 * files writing to the shared project at the same time would change under the suite.
 */
export async function twoFirestoreInstances<S extends Closable>(make: (fs: Firestore) => S): Promise<TwoInstances<S>> {
  const projectId = `${process.env.EMULATOR_PROJECT ?? 'demo-lsv-test'}-${randomBytes(4).toString('hex')}`
  const clients = [0, 1].map(() => new Firestore({ projectId }))
  const [store, other] = clients.map((fs) => make(fs)) as [S, S]
  return {
    store,
    other,
    async close() {
      for (const s of [store, other]) await s.close()
      for (const c of clients) await c.terminate()
    },
  }
}

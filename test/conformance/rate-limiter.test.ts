import { describe } from 'vitest'
import { Firestore, Timestamp } from '@google-cloud/firestore'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedRateLimiter } from '@lsv/shared/adapters/embedded/rate-limiter.ts'
import { createFirestoreRateLimiter } from '@lsv/shared/adapters/google/firestore-rate-limiter.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { rateLimiterConformance } from './suites/rate-limiter.ts'

describe('rate limiter: embedded (node:sqlite), two handles on one file', () => {
  rateLimiterConformance(async () => {
    const dir = tempDataDir()
    const dbs = [openEmbeddedDb(dir.dir), openEmbeddedDb(dir.dir)]
    const [limiter, other] = dbs.map((db) => createEmbeddedRateLimiter(db))
    return {
      limiter: limiter!,
      other: other!,
      async close() {
        for (const l of [limiter!, other!]) await l.close()
        for (const db of dbs) db.close()
        dir.cleanup()
      },
    }
  })
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('rate limiter: Firestore emulator, two clients', () => {
  rateLimiterConformance(async () => {
    const clients = [0, 1].map(() => new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' }))
    const [limiter, other] = clients.map((fs) => createFirestoreRateLimiter(fs))
    return {
      limiter: limiter!,
      other: other!,
      async close({ fromMs, toMs }) {
        // the suite's counters are the only ones that end inside its (random, far-future) day
        const fs = clients[0]!
        const docs = await fs
          .collection('rate_limits')
          .where('expire_at', '>', Timestamp.fromMillis(fromMs))
          .where('expire_at', '<=', Timestamp.fromMillis(toMs + 3_600_000))
          .get()
        const writer = fs.bulkWriter()
        for (const d of docs.docs) writer.delete(d.ref).catch(() => {})
        await writer.close()
        for (const l of [limiter!, other!]) await l.close()
        for (const c of clients) await c.terminate()
      },
    }
  })
})

import { describe, expect, it } from 'vitest'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedRateLimiter } from '@lsv/shared/adapters/embedded/rate-limiter.ts'
import type { RateLimiter } from '@lsv/shared/ports/rate-limiter.ts'
import type { RateLimitWindow } from '@lsv/shared/model/rate-limit-window.ts'
import { randomSuffix, tempDataDir } from '../helpers/embedded.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 9, one level down from rate-limits.test.ts: two rate limiter adapters over one store
 * (two sqlite connections on one file; two Firestore clients on the emulator), 5x the limit
 * concurrently, one instant inside one window. Exactly the limit is admitted, and every refusal
 * names the short window with the seconds left in it.
 */

const LIMIT = 120
const REQUESTS = 5 * LIMIT

/** The same property one level down: two limiter adapters over one store, without HTTP. */
describe('reliability 9: the rate limiter port across two instances', () => {
  const WINDOWS: RateLimitWindow[] = [
    { name: 'short', limit: LIMIT, seconds: 60 },
    { name: 'long', limit: 50_000, seconds: 86_400 },
  ]

  async function hammer(label: string, a: RateLimiter, b: RateLimiter) {
    const key = `rel-${randomSuffix(6)}`
    const now = Math.floor(Date.now() / 60_000) * 60_000 + 1_000
    const decisions = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => (i % 2 ? a : b).consume(key, WINDOWS, now)))
    const admitted = decisions.filter((d) => d.allowed).length
    const wrongReset = decisions.filter((d) => !d.allowed && (d.window.name !== 'short' || d.resetInSeconds !== 59)).length
    printFigure(
      `rate-limiter-port-${label}`,
      `${admitted} admitted of ${REQUESTS} concurrent consumes over 2 adapters (limit ${LIMIT}); ${wrongReset} refusals with a wrong window or reset`,
    )
    expect(admitted).toBe(LIMIT)
    expect(wrongReset).toBe(0)
  }

  it('embedded: two adapters on one database file', async () => {
    const dir = tempDataDir('lsv-rel-rl-')
    const d1 = openEmbeddedDb(dir.dir)
    const d2 = openEmbeddedDb(dir.dir)
    const a = createEmbeddedRateLimiter(d1)
    const b = createEmbeddedRateLimiter(d2)
    try {
      await hammer('embedded', a, b)
    } finally {
      await a.close()
      await b.close()
      d1.close()
      d2.close()
      dir.cleanup()
    }
  })

  it.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('Firestore emulator: two clients', async () => {
    const { Firestore } = await import('@google-cloud/firestore')
    const { createFirestoreRateLimiter } = await import('@lsv/shared/adapters/google/firestore-rate-limiter.ts')
    const project = process.env.EMULATOR_PROJECT ?? 'demo-lsv-test'
    const f1 = new Firestore({ projectId: project })
    const f2 = new Firestore({ projectId: project })
    const a = createFirestoreRateLimiter(f1)
    const b = createFirestoreRateLimiter(f2)
    try {
      await hammer('firestore', a, b)
    } finally {
      await a.close()
      await b.close()
      await f1.terminate()
      await f2.terminate()
    }
  })
})

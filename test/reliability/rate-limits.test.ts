import { afterAll, describe, expect, it } from 'vitest'
import { ManualClock } from '@lsv/shared/model/clock.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { tempDataDir } from '../helpers/embedded.ts'
import { createTestTenant } from '../helpers/tenant.ts'
import { RELIABILITY_TENANT, contactRecord, type Injectable } from './support/requests.ts'
import { printFigure } from './support/figures.ts'

/**
 * Item 9: two edge-ingest instances (two buildApp over two PlatformDeps sharing ONE store: the
 * same DATA_DIR, or the Firestore emulator) driven concurrently at 5x the short-window limit
 * (contract 8: 120 per 60 s per API key). At most 120 requests are admitted in the window, and
 * every 429 carries `Retry-After: 60` (contract 7.3: integer seconds, 60 for the 60 s window)
 * and the envelope `rate limited`. Both instances share one ManualClock parked inside one window,
 * so a window boundary cannot fall in the middle of the run.
 */

const LIMIT = 120
const REQUESTS = 5 * LIMIT

type Deps = Awaited<ReturnType<typeof createTestDeps>>

async function drive(label: string, make: (clock: ManualClock) => Promise<[Deps, Deps]>) {
  // 1 s into a 60 s window (windows are aligned to multiples of their length since the epoch)
  const clock = new ManualClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000)
  const [a, b] = await make(clock)
  const portal = (await buildPortal(a)) as unknown as Injectable
  const edgeA = (await buildEdge(a)) as unknown as Injectable
  const edgeB = (await buildEdge(b)) as unknown as Injectable
  try {
    const tenant = await createTestTenant({ managementApi: portal, deps: a }, RELIABILITY_TENANT)
    const body = JSON.stringify({ contacts: [contactRecord(1)] })
    // the emulator variant creates its topics on first use (createMissing; in Google Cloud
    // Terraform creates them): done here, so the burst's answer times measure serving, not setup
    for (const d of [a, b]) await (await d.queue.subscribe('contact-batches', async () => 'nack')).close()
    const startedAt = performance.now()
    const answeredMs: number[] = []
    const results = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const res = await (i % 2 === 0 ? edgeA : edgeB).inject({
          method: 'POST',
          url: '/v1/contacts',
          payload: body,
          headers: { host: tenant.host, authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
        })
        answeredMs.push(performance.now() - startedAt)
        return res
      }),
    )
    answeredMs.sort((x, y) => x - y)
    const p99 = answeredMs[Math.ceil(0.99 * answeredMs.length) - 1]!
    const admitted = results.filter((r) => r.statusCode === 202).length
    const limited = results.filter((r) => r.statusCode === 429)
    const other = results.filter((r) => r.statusCode !== 202 && r.statusCode !== 429).map((r) => `${r.statusCode} ${r.body}`)
    const badRetryAfter = limited.filter((r) => r.headers['retry-after'] !== '60' || r.json().error !== 'rate limited' || r.json().ok !== false)
    printFigure(
      `rate-limits-${label}`,
      `${admitted} admitted of ${REQUESTS} concurrent requests over 2 instances (limit ${LIMIT}/60 s); ${limited.length} answered 429, ${badRetryAfter.length} with a wrong Retry-After or body; answers from the start of the burst: p99 ${Math.round(p99)} ms, longest ${Math.round(answeredMs.at(-1)!)} ms (dependency deadline ${a.config.edgeDependencyDeadlineMs} ms per stage)`,
    )
    // a stage cut by the edge's dependency deadline is a 503 here. Mutation (issue 23): the tenant
    // lookup cache reading the store once per request while unconfirmed -> 600 × 503 on the emulator
    expect(other).toEqual([])
    expect(admitted).toBeLessThanOrEqual(LIMIT)
    expect(admitted).toBeGreaterThan(0)
    expect(admitted + limited.length).toBe(REQUESTS)
    expect(badRetryAfter.map((r) => [r.headers['retry-after'], r.body])).toEqual([])
  } finally {
    await edgeA.close()
    await edgeB.close()
    await portal.close()
    await a.cleanup()
    await b.cleanup()
  }
}

describe('reliability 9: rate limits across two instances', () => {
  const shared = tempDataDir('lsv-rel-ratelimit-')
  afterAll(() => shared.cleanup())

  it('embedded: two instances over one DATA_DIR admit at most the limit, every 429 has Retry-After 60', async () => {
    await drive('embedded', async (clock) => [
      await createTestDeps({ clock, env: { DATA_DIR: shared.dir } }),
      await createTestDeps({ clock, env: { DATA_DIR: shared.dir } }),
    ])
  })

  it.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('Firestore emulator: two instances admit at most the limit, every 429 has Retry-After 60', async () => {
    await drive('firestore', async (clock) => [await createTestDeps({ clock, backend: 'emulators' }), await createTestDeps({ clock, backend: 'emulators' })])
  })
})

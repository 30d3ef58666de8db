/**
 * Where the small push's distance from the bare route lies (`npm run bench:push-split`;
 * docs/performance.md, "Twelfth pass"): bench:ingest part A's edge taken apart in one process, as
 * bench:dispatch-split takes the delivery apart. Each round runs every side once (autocannon, 100
 * connections, BENCH_SECONDS each), in a shuffled order:
 *
 *  - `edge`: the edge-ingest app on the embedded adapters, as part A runs it (its clock a minute
 *    later per call: every push counts in fresh rate-limit windows, so the limiter writes and
 *    never refuses);
 *  - `no store`: the same app with no store statement on the push: a rate limiter that admits
 *    without a transaction, and a queue whose publish only waits for a WAL fdatasync (the sync a
 *    durable 202 waits for, on a database of its own), so the group commits, the claims and the
 *    inserts are gone and the durability wait stays. What SQLite costs the push, and what the
 *    edge would reach if its writes cost the main thread nothing;
 *  - `no push listeners`: the same app with no push listener (the push log, the activity counts):
 *    what the reactions to an answered push cost;
 *  - `bare`: part A's control, a bare fastify route answering 202.
 *
 * Prints per round and as medians of the rounds' ratios: req/s and CPU µs per request (this
 * process: the servers and autocannon) of each side against `bare`. BENCH_ROUNDS (default 7).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { loadConfig } from '../shared/src/config/config.ts'
import { createPlatformDeps } from '../shared/src/platform/deps.ts'
import { openEmbeddedDb } from '../shared/src/adapters/embedded/db.ts'
import type { PlatformDeps } from '../shared/src/ports/deps.ts'
import type { Queue } from '../shared/src/ports/queue.ts'
import type { RateLimiter } from '../shared/src/ports/rate-limiter.ts'
import { buildApp } from '../services/edge-ingest/src/app.ts'
import { makeBenchTenant } from './lib/bench-tenant.ts'
import { bareSide, edgeAsSide, embeddedBenchEnv, PUSH_CONNECTIONS, type PushSide, runSmallPushes } from './lib/push-sides.ts'
import { median } from './lib/rounds.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
/** the edge app on `deps` changed by `variant`, listening on a free loopback port */
async function edgeSide(variant: (deps: PlatformDeps, dir: string) => PlatformDeps): Promise<PushSide> {
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-split-'))
  let t = Date.now()
  const config = loadConfig(embeddedBenchEnv(dir))
  const built = await createPlatformDeps(config, pino({ level: 'silent' }), { clock: { now: () => (t += 61_000) } })
  const tenant = await makeBenchTenant(built)
  const deps = variant(built, dir)
  return edgeAsSide(await buildApp(deps), tenant, async () => {
    // a variant's own queue (storeFree's) is closed here; the built one with the rest
    if (deps.queue !== built.queue) await deps.queue.close()
    await built.close()
    rmSync(dir, { recursive: true, force: true })
  })
}

/** `no store`: admits without the store; publishes nothing and waits for a WAL sync of a database of its own */
function storeFree(deps: PlatformDeps, dir: string): PlatformDeps {
  const syncOnly = openEmbeddedDb(join(dir, 'sync-only'))
  // a first commit: the WAL file a sync opens exists from then on
  syncOnly.db.exec('CREATE TABLE IF NOT EXISTS written (n INTEGER)')
  let n = 0
  const rateLimiter: RateLimiter = { ...deps.rateLimiter, consume: async () => ({ allowed: true }) }
  const queue: Queue = {
    ...deps.queue,
    async publish() {
      await syncOnly.syncWal()
      return `m${n++}`
    },
    close: () => syncOnly.close(),
  }
  return { ...deps, rateLimiter, queue }
}

const sides: Record<string, PushSide> = {
  edge: await edgeSide((d) => d),
  'no store': await edgeSide(storeFree),
  'no push listeners': await edgeSide((d) => ({ ...d, listeners: { ...d.listeners, push: [] } })),
  bare: await bareSide(),
}
const names = Object.keys(sides)
try {
  for (const name of names) await runSmallPushes(sides[name]!, 1) // warm-up: JIT, SQLite page cache, connections
  console.log(
    `bench:push-split (${ROUNDS} rounds, ${SECONDS} s per run, ${PUSH_CONNECTIONS} connections, node ${process.version}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  )
  const got: Record<string, Array<{ cpu: number; rps: number }>> = Object.fromEntries(names.map((n) => [n, []]))
  for (let r = 0; r < ROUNDS; r++) {
    const order = [...names].sort(() => Math.random() - 0.5)
    for (const name of order) got[name]!.push(await runSmallPushes(sides[name]!, SECONDS))
    console.log(`  round ${r + 1}: ${names.map((n) => `${n} ${got[n]!.at(-1)!.rps.toFixed(0)}/s ${got[n]!.at(-1)!.cpu.toFixed(0)} µs`).join(', ')}`)
  }
  console.log("medians of the rounds' ratios to bare: req/s, and CPU µs per request (autocannon included on every side)")
  for (const name of names.filter((n) => n !== 'bare')) {
    const rps = median(got[name]!.map((x, i) => x.rps / got.bare![i]!.rps))
    const cpu = median(got[name]!.map((x, i) => x.cpu / got.bare![i]!.cpu))
    console.log(`  ${name.padEnd(18)} req/s ${(100 * rps).toFixed(1)} % of bare   CPU ${cpu.toFixed(2)}× bare`)
  }
  console.log(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
} finally {
  for (const name of names) await sides[name]!.close()
}

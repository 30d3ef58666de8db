/**
 * The small push of two trees side by side in one process (docs/performance.md, "Fourth pass"):
 * an edge built from another checkout (BENCH_AB_BEFORE, a folder), an edge built from this one,
 * each on its own data folder, and the bare fastify route of bench/ingest.ts part A, run in a
 * shuffled order each round (autocannon, 100 connections, BENCH_SECONDS each, BENCH_ROUNDS rounds).
 * A loaded machine moves every run; within one process and one round the three sides meet the
 * same load, so the per-round ratios say more than two separate bench runs. Prints CPU µs per
 * request (this process: the servers and autocannon) and req/s per side and round, and the medians.
 *
 * The other checkout needs its own `node_modules/@lsv` links (its files import `@lsv/shared/…`):
 *
 *   git archive <commit> | tar -x -C /tmp/before
 *   mkdir /tmp/before/node_modules && for e in node_modules/* node_modules/.bin; do
 *     [ "$(basename $e)" = @lsv ] || ln -s "$PWD/$e" /tmp/before/node_modules/; done
 *   mkdir /tmp/before/node_modules/@lsv && ln -s ../../shared /tmp/before/node_modules/@lsv/shared
 *   for s in edge-ingest portal-api upsert-worker webhook-dispatcher; do
 *     ln -s ../../services/$s /tmp/before/node_modules/@lsv/$s; done
 *   ln -s "$PWD/shared/node_modules" /tmp/before/shared/node_modules
 *   BENCH_AB_BEFORE=/tmp/before node bench/push-ab.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pino from 'pino'
import { makeBenchTenant } from './lib/bench-tenant.ts'
import { bareSide, edgeAsSide, embeddedBenchEnv, PUSH_CONNECTIONS, type PushSide, runSmallPushes } from './lib/push-sides.ts'
import { median } from './lib/rounds.ts'

const BEFORE = process.env.BENCH_AB_BEFORE
if (!BEFORE) throw new Error('BENCH_AB_BEFORE: the folder of the other checkout (see the comment at the top)')
const AFTER = resolve(fileURLToPath(new URL('..', import.meta.url)))
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
/** An edge of the tree at `root`, its tenant and key (made through that tree's tenant store), on a data folder of its own; its clock a minute later per call (bench/ingest.ts part A). */
async function edgeOf(root: string): Promise<PushSide> {
  const { loadConfig } = await import(`${root}/shared/src/config/config.ts`)
  const { createPlatformDeps } = await import(`${root}/shared/src/platform/deps.ts`)
  const { buildApp } = await import(`${root}/services/edge-ingest/src/app.ts`)
  const dir = mkdtempSync(join(tmpdir(), 'lsv-bench-ab-'))
  let t = Date.now()
  const config = loadConfig(embeddedBenchEnv(dir))
  const deps = await createPlatformDeps(config, pino({ level: 'silent' }), { clock: { now: () => (t += 61_000) } })
  const tenant = await makeBenchTenant(deps)
  return edgeAsSide(await buildApp(deps), tenant, async () => {
    await deps.close()
    rmSync(dir, { recursive: true, force: true })
  })
}

const sides: Record<'before' | 'after' | 'bare', PushSide> = { before: await edgeOf(resolve(BEFORE)), after: await edgeOf(AFTER), bare: await bareSide() }
const names = Object.keys(sides) as Array<keyof typeof sides>
try {
  for (const name of names) await runSmallPushes(sides[name], 1) // warm-up: JIT, SQLite page cache, connections
  console.log(
    `bench:push-ab (${ROUNDS} rounds, ${SECONDS} s per run, ${PUSH_CONNECTIONS} connections; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  )
  const got: Record<string, Array<{ cpu: number; rps: number }>> = { before: [], after: [], bare: [] }
  for (let r = 0; r < ROUNDS; r++) {
    const order = [...names].sort(() => Math.random() - 0.5)
    for (const name of order) got[name]!.push(await runSmallPushes(sides[name], SECONDS))
    const last = (name: string) => got[name]!.at(-1)!
    console.log(
      `  round ${r + 1} (${order.join(', ')}): CPU µs per request before ${last('before').cpu.toFixed(0)}, after ${last('after').cpu.toFixed(0)}, bare ${last('bare').cpu.toFixed(0)}; req/s ${last('before').rps.toFixed(0)} / ${last('after').rps.toFixed(0)} / ${last('bare').rps.toFixed(0)}`,
    )
  }
  const per = (name: string, f: (x: { cpu: number; rps: number }, i: number) => number) => median(got[name]!.map(f))
  console.log(
    `medians: CPU µs per request before ${per('before', (x) => x.cpu).toFixed(0)}, after ${per('after', (x) => x.cpu).toFixed(0)}, bare ${per('bare', (x) => x.cpu).toFixed(0)}`,
  )
  console.log(
    `  per round: after/before CPU ${per('after', (x, i) => x.cpu / got.before![i]!.cpu).toFixed(2)}; CPU vs bare: before ${per('before', (x, i) => x.cpu / got.bare![i]!.cpu).toFixed(2)}×, after ${per('after', (x, i) => x.cpu / got.bare![i]!.cpu).toFixed(2)}×; req/s vs bare: before ${per('before', (x, i) => x.rps / got.bare![i]!.rps).toFixed(2)}, after ${per('after', (x, i) => x.rps / got.bare![i]!.rps).toFixed(2)}`,
  )
  console.log(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  )
} finally {
  for (const name of names) await sides[name].close()
}

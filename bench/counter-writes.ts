/**
 * Store writes of the delivery listeners' counters (`npm run bench:counter-writes`; docs/performance.md,
 * "Eighth pass"): the endpoint health changes of delivery attempts spread over time, as a
 * deployed dispatcher sees them (200 attempts to 20 endpoints, one every 10 ms, each at its own
 * millisecond), gathered by the counter buffer and written to the Firestore emulator's counters
 * (the deployed shape's adapter; FIRESTORE_EMULATOR_HOST, else an emulator started here and
 * stopped by pid). The cut (domain/outcomes/counter-buffer.ts as it is: expiries rounded up to
 * the minute) against its control in this same process (the same buffer keeping each expiry to
 * the millisecond, as it did before: the latest-success instant, kept 400 days after the attempt,
 * then had an expiry per attempt, and each expiry is a store write). Alternating rounds
 * (BENCH_ROUNDS, 3; BENCH_ATTEMPTS, 200, per run); per side the Firestore commits and this process's CPU per attempt
 * (the Firestore client's work; the emulator runs in its own process and is not counted).
 */
import { Firestore } from '@google-cloud/firestore'
import pino from 'pino'
import { loadavg } from 'node:os'
import { benchEmulators } from './lib/emulators.ts'
import { processCpuUs, quietFrom } from './lib/quiet.ts'
import { createFirestoreCounters } from '../shared/src/adapters/google/firestore-counters.ts'
import { counterBuffer } from '../shared/src/domain/outcomes/counter-buffer.ts'
import { healthChanges } from '../shared/src/domain/webhooks/endpoint-health.ts'
import type { Counters } from '../shared/src/ports/counters.ts'
import { median } from './lib/rounds.ts'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ATTEMPTS = Number(process.env.BENCH_ATTEMPTS ?? 200)
const ENDPOINTS = 20
const SPACING_MS = 10

const project = process.env.EMULATOR_PROJECT ?? 'demo-lsv-bench'
console.log(
  `bench:counter-writes (${ATTEMPTS} attempts to ${ENDPOINTS} endpoints, one every ${SPACING_MS} ms, x ${ROUNDS} rounds, node ${process.version}, load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')})`,
)
const emulators = await benchEmulators(['firestore'], project)
process.env.FIRESTORE_EMULATOR_HOST = emulators.firestore
process.env.METADATA_SERVER_DETECTION ??= 'none'
const firestore = new Firestore({ projectId: project, ignoreUndefinedProperties: true })
const store = createFirestoreCounters(firestore)
let commits = 0
const counting: Counters = {
  ...store,
  apply: (changes, expireAtMs) => {
    commits++
    return store.apply(changes, expireAtMs)
  },
}
const logger = pino({ level: 'warn' })
// the client's first calls (channel, auth) are nobody's
await store.apply([{ key: 'bench:warm-up', add: 1 }], Date.now() + 60_000)

let round = 0
/** one run: the attempts' health changes gathered as the listener gathers them, flushed every second and at the end */
async function run(grainMs: number | undefined): Promise<{ commits: number; cpuUsPerAttempt: number }> {
  round++
  const buffer = counterBuffer({ counters: counting, logger }, 'bench health counters', 1_000, grainMs)
  await quietFrom()
  commits = 0
  const cpuStart = processCpuUs()
  for (let i = 0; i < ATTEMPTS; i++) {
    for (const { changes, expireAtMs } of healthChanges(`int_bench_${round}_${i % ENDPOINTS}`, Date.now(), i % 7 !== 0)) {
      for (const change of changes) buffer.gather(change, expireAtMs)
    }
    await new Promise((r) => setTimeout(r, SPACING_MS))
  }
  await buffer.flush()
  return { commits, cpuUsPerAttempt: (processCpuUs() - cpuStart) / ATTEMPTS }
}

const sides = { control: { commits: [] as number[], cpu: [] as number[] }, cut: { commits: [] as number[], cpu: [] as number[] } }
for (let r = 0; r < ROUNDS; r++) {
  // alternating order: control first in even rounds
  const order = r % 2 === 0 ? (['control', 'cut'] as const) : (['cut', 'control'] as const)
  for (const side of order) {
    const got = await run(side === 'control' ? 1 : undefined)
    sides[side].commits.push(got.commits)
    sides[side].cpu.push(got.cpuUsPerAttempt)
  }
  console.log(
    `round ${r + 1}: control ${sides.control.commits.at(-1)} commits, ${sides.control.cpu.at(-1)!.toFixed(0)} µs CPU per attempt; cut ${sides.cut.commits.at(-1)} commits, ${sides.cut.cpu.at(-1)!.toFixed(0)} µs`,
  )
}
const ratio = median(sides.cut.cpu.map((c, i) => c / sides.control.cpu[i]!))
console.log(
  `counter writes: ${median(sides.cut.commits)} commits for ${ATTEMPTS} attempts against ${median(sides.control.commits)} (control); CPU per attempt ${median(sides.cut.cpu).toFixed(0)} µs against ${median(sides.control.cpu).toFixed(0)} µs, cut/control ${ratio.toFixed(2)} (median of per-round ratios; the emulator's own CPU not counted)`,
)
await firestore.terminate()
await emulators.stop()

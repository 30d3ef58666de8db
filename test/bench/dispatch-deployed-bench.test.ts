import { describe, expect, it } from 'vitest'
import { runBench } from './support/run-bench.ts'

/**
 * bench:dispatch `--deployed` (bench/dispatch.ts: the delivery log and tenant store on Firestore,
 * each attempt run as POST /tasks/deliver runs it) at a tiny size, so the figure docs/capacity.md
 * prices a delivery with cannot rot unseen. Nothing about time is asserted: only that every
 * delivery succeeds and the CPU figures are printed.
 */
describe('bench:dispatch --deployed, tiny size', () => {
  it('delivers every attempt through the Firestore stores and prints the CPU per delivery of both sides', async () => {
    const stdout = await runBench(['bench/dispatch.ts', '--deployed'], { BENCH_DELIVERIES: '20', BENCH_ROUNDS: '1', BENCH_WARMUP_ROUNDS: '0' })
    expect(stdout).toMatch(/deployed shape: the stores on the Firestore emulator \S+\n/)
    // mutation, tried: a deployed round whose attempts do not succeed throws, and prints no round
    expect(stdout).toMatch(
      /round 1 \(platform first\): platform \d+\/s, bare \d+\/s, ratio [\d.]+%; CPU per delivery platform \d+ µs, bare \d+ µs; main thread per delivery: platform CPU\/wall \d+\/\d+ µs, loop busy \d+%, bare CPU\/wall \d+\/\d+ µs, loop busy \d+%\n/,
    )
    expect(stdout).toMatch(/dispatch, CPU time: bare CPU per delivery \/ platform CPU per delivery [\d.]+%/)
  }, 180_000)
})

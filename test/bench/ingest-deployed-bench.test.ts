import { describe, expect, it } from 'vitest'
import { runBench } from './support/run-bench.ts'

/**
 * bench:ingest part E (`--deployed`: the edge on the Firestore and Pub/Sub adapters against the
 * emulators, bench/ingest.ts) at a tiny size, so the part cannot rot between its full runs: it
 * once hung every request for the whole dependency deadline and produced no figure at all.
 * Nothing about time is asserted: only that it runs to the end and prints its figures.
 */
describe('bench:ingest --deployed, tiny size', () => {
  it('answers every push and batch with 202 on both sides and prints the CPU figures and the ratios', async () => {
    const stdout = await runBench(['bench/ingest.ts', '--deployed'], {
      BENCH_ROUNDS: '1',
      BENCH_DEPLOYED_PUSHES: '24',
      BENCH_DEPLOYED_CONNECTIONS: '8',
      BENCH_DEPLOYED_BATCHES: '1',
    })
    // per round: CPU µs per push and ms per batch, edge/bare, and the requests/s of each side
    expect(stdout).toMatch(
      /deployed shape, server-side CPU edge\/bare per round \(24 pushes, 1 batches a run\): push \d+\/\d+ µs \(\d+\/\d+ req\/s\), batch \d+\/\d+ ms\n/,
    )
    // the emulators' own CPU apart ('?' when the run was given emulators it did not start)
    expect(stdout).toMatch(
      /the emulators' own CPU per request, edge\/bare \(not in the figures above\): push (\d+|\?)\/(\d+|\?) µs, batch (\d+|\?)\/(\d+|\?) ms\n/,
    )
    // mutation, tried: a part E that throws after its warm-up prints neither ratio (and exits 1)
    expect(stdout).toMatch(/E\. deployed: small push CPU, edge vs bare publish \(8 conn\.\) +\d+\.\d\dx/)
    expect(stdout).toMatch(/E\. deployed: 10k-record batch CPU, edge vs bare publish +\d+\.\d\dx/)
  }, 180_000)
})

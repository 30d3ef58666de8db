import { describe, expect, it } from 'vitest'
import { runBench } from './support/run-bench.ts'

/**
 * bench:counter-writes (bench/counter-writes.ts) with one round: the endpoint health counters of
 * 60 attempts spread over time, written to the Firestore emulator by the counter buffer as it is
 * and by its control (expiries kept to the millisecond, as before). The commits are counted, not
 * timed: the buffer must write a few times a second, the control once per attempt.
 */
describe('bench:counter-writes, one round', () => {
  it('counts the store writes of both sides: a few for the buffer, one per attempt for the control', async () => {
    const stdout = await runBench(['bench/counter-writes.ts'], { BENCH_ROUNDS: '1', BENCH_ATTEMPTS: '60' })
    const m = /counter writes: (\d+) commits for 60 attempts against (\d+) \(control\)/.exec(stdout)
    expect(m, stdout).not.toBeNull()
    // mutation: expiries not rounded in counter-buffer.ts -> both sides about 60
    expect(Number(m![1])).toBeLessThanOrEqual(10)
    expect(Number(m![2])).toBeGreaterThanOrEqual(60)
  }, 180_000)
})

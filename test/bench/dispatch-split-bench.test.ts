import { describe, expect, it } from 'vitest'
import { runBench } from './support/run-bench.ts'

/**
 * bench:dispatch-split (bench/dispatch-split.ts: a delivery's main-thread time taken apart, each
 * part against the whole) at a tiny size, so the decomposition docs/performance.md quotes cannot
 * rot unseen. Nothing about time is asserted: every variant's deliveries must succeed (a variant
 * whose deliveries fail throws) and each variant's figure is printed.
 */
describe('bench:dispatch-split, tiny size', () => {
  it('runs every variant and prints its main-thread CPU per delivery', async () => {
    const stdout = await runBench(['bench/dispatch-split.ts'], { BENCH_DELIVERIES: '20', BENCH_ROUNDS: '1' })
    for (const variant of ['platform', 'memory log', 'lean sender', 'pooled sender', 'no listeners', 'scheduler', 'bare'])
      expect(stdout).toMatch(new RegExp(`\\n  ${variant} +\\d+ `))
  }, 180_000)
})

import { describe, expect, it } from 'vitest'
import { runBench } from './support/run-bench.ts'

/**
 * bench:push-split (bench/push-split.ts: the small push taken apart, each side against the bare
 * route) at a tiny size, so the decomposition docs/performance.md quotes cannot rot unseen.
 * Nothing about time is asserted: every side must answer every push with a 2xx (a side with a
 * refused push throws) and each side's ratios are printed.
 */
describe('bench:push-split, tiny size', () => {
  it('runs every side and prints its ratios to the bare route', async () => {
    const stdout = await runBench(['bench/push-split.ts'], { BENCH_ROUNDS: '1', BENCH_SECONDS: '1' })
    for (const side of ['edge', 'no store', 'no push listeners'])
      expect(stdout).toMatch(new RegExp(`\\n  ${side} +req/s \\d+\\.\\d % of bare +CPU \\d+\\.\\d\\d× bare`))
  }, 180_000)
})

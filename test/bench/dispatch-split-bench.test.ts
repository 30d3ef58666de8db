import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)

/**
 * bench:dispatch-split (bench/dispatch-split.ts: a delivery's main-thread time taken apart, each
 * part against the whole) at a tiny size, so the decomposition docs/performance.md quotes cannot
 * rot unseen. Nothing about time is asserted: every variant's deliveries must succeed (a variant
 * whose deliveries fail throws) and each variant's figure is printed.
 */
describe('bench:dispatch-split, tiny size', () => {
  it('runs every variant and prints its main-thread CPU per delivery', async () => {
    const { stdout } = await run(process.execPath, ['bench/dispatch-split.ts'], {
      env: { ...process.env, BENCH_DELIVERIES: '20', BENCH_ROUNDS: '1' },
      timeout: 150_000,
      maxBuffer: 16 * 1024 * 1024,
    })
    for (const variant of ['platform', 'memory log', 'lean sender', 'pooled sender', 'no listeners', 'scheduler', 'bare'])
      expect(stdout).toMatch(new RegExp(`\\n  ${variant} +\\d+ `))
  }, 180_000)
})

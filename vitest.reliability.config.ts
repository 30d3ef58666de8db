import { defineConfig } from 'vitest/config'
import SlowFilesFirst from './test/setup/slow-files-first.ts'

/**
 * The reliability suite in two groups, one after the other (`sequence.groupOrder`):
 * - `reliability`: files that assert no time bound (in-process apps, corpora, the rate limiter
 *   port, crash safety: exactly-once under SIGKILLs, however long it takes, and the dispatcher
 *   outage: every delivery arrives after a restart and none is dropped, whenever the attempts
 *   fall; a slower machine only makes its outage longer): two at a time, crash safety first
 *   (the slowest, test/setup/slow-files-first.ts);
 * - `reliability-serial`: files that measure time against a bound (shutdown within 10 s, a stall
 *   answered within the deadline, a receiver timed out within the send bound, recovery before a
 *   lease ends, 600 requests each under the dependency deadline, a peak of RSS under whole bodies
 *   to unrouted requests): one at a time, after the others,
 *   with nothing else of the suite beside them. scripts/run-tests.ts gives `--maxWorkers` to the
 *   main suites only: a CLI value would override this group's one at a time.
 */
const SERIAL = [
  'test/reliability/dead-owner-recovery.test.ts',
  'test/reliability/dependency-stall.test.ts',
  'test/reliability/graceful-shutdown.test.ts',
  'test/reliability/rate-limits.test.ts',
  'test/reliability/unrouted-body-memory.test.ts',
  'test/reliability/webhook-receivers.test.ts',
]

export default defineConfig({
  test: {
    setupFiles: ['test/setup/node-version.ts', 'test/setup/loopback-only.ts'],
    pool: 'forks',
    testTimeout: 600_000,
    hookTimeout: 120_000,
    env: { NODE_ENV: 'test' },
    sequence: { sequencer: SlowFilesFirst },
    projects: [
      {
        extends: true,
        test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], exclude: SERIAL, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'reliability-serial', include: SERIAL, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
})

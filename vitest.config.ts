import { defineConfig } from 'vitest/config'
import SlowFilesFirst from './test/setup/slow-files-first.ts'
import { leftOut } from './scripts/lib/left-out.ts'

/**
 * The files that need a process of their own. Every other file shares its worker's process with
 * the files that ran before it there (`isolate: false`): a fresh process per file cost about
 * 1.2 s of start-up and module loading each, 264 times a run (docs/testing.md, "A process per
 * worker"). These change what every later file in the process would see:
 * - OpenTelemetry's global providers and instrumentations (startTelemetry);
 * - vitest's module mocks, stubbed env or timers, and process-wide env or signal handlers;
 * - two emulator files whose set-up waited out its 60 s for a Pub/Sub client in a shared process
 *   (after other files had run there; which one left what behind is not found yet).
 * test/setup/own-process-files.test.ts checks each exists and that no other file does these things.
 */
export const OWN_PROCESS_FILES = [
  'test/contacts/change-feed.test.ts',
  'test/embedded/db.test.ts',
  'test/health/pubsub-readiness.test.ts',
  'test/http/dependency-deadline.test.ts',
  'test/ingest/edge-partnercrm.test.ts',
  'test/logging/task-trace.test.ts',
  'test/logging/telemetry-refused.test.ts',
  'test/logging/telemetry-sampling.test.ts',
  'test/logging/telemetry.test.ts',
  'test/management/visits-deadline.test.ts',
  'test/outbound/dead-letter-events.test.ts',
]

/** what this run leaves out of both projects (`npm run test:quick`): scripts/lib/left-out.ts */
const LEFT_OUT = leftOut()

export default defineConfig({
  test: {
    setupFiles: ['test/setup/node-version.ts', 'test/setup/loopback-only.ts'],
    // one `npm start` stack and one Chromium for the browser files, started when the first asks
    globalSetup: ['test/setup/browser-hub.ts'],
    // its teardown stops that stack (SIGTERM, drained within 10 s, else SIGKILL) and the browser
    teardownTimeout: 30_000,
    pool: 'forks',
    // how many files at a time: scripts/run-tests.ts passes --maxWorkers (two, or one on one core)
    // the known-slow files first, so that two workers end together (test/setup/slow-files-first.ts)
    sequence: { sequencer: SlowFilesFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
    // one group (the same groupOrder): the two projects share the workers, and run at the same time
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: ['test/reliability/**', 'node_modules/**', ...OWN_PROCESS_FILES, ...LEFT_OUT],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'main-own-process', include: [...OWN_PROCESS_FILES], exclude: [...LEFT_OUT] } },
    ],
  },
})

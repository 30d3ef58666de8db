import { defineConfig } from 'vitest/config'
import SlowFilesFirst from './test/setup/slow-files-first.ts'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**', 'node_modules/**'],
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
  },
})

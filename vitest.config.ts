import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**', 'node_modules/**'],
    setupFiles: ['test/setup/node-version.ts', 'test/setup/loopback-only.ts'],
    pool: 'forks',
    // how many files at a time: scripts/run-tests.ts passes --maxWorkers (as many as cores on a
    // quiet machine, one at a time on a busy one)
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
})

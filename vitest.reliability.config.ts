import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/reliability/**/*.test.ts'],
    setupFiles: ['test/setup/node-version.ts', 'test/setup/loopback-only.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 120_000,
    env: { NODE_ENV: 'test' },
  },
})

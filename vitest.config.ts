import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**', 'node_modules/**'],
    setupFiles: ['test/setup/node-version.ts', 'test/setup/loopback-only.ts'],
    pool: 'forks',
    // one file more than the cores: most files spend their time waiting on a child process, an
    // emulator or a browser, and vitest's default (cores - 1) ran them one at a time on 2 cores
    maxWorkers: Math.min(6, availableParallelism() + 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
})

import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/reliability/**', 'node_modules/**'],
    setupFiles: ['test/setup/node-version.ts', 'test/setup/loopback-only.ts'],
    pool: 'forks',
    // as many files at a time as cores: most files spend their time waiting on a child process,
    // an emulator or a browser, and vitest's default (cores - 1) ran them one at a time on 2
    // cores. One more than the cores starved the shared emulators on a loaded machine (Firestore
    // calls past the 30 s test timeout, a queue lease renewed too late); `-- --maxWorkers=1`
    // runs them one at a time on a busy machine.
    maxWorkers: Math.min(6, availableParallelism()),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
})

// StrykerJS (mutation testing) on the security- and data-critical modules: `npm run test:mutation`.
// scripts/mutation-modules.ts lists each module's files and tests; scripts/mutation.ts runs one
// module at a time and sets `STRYKER_MODULE`. Not part of `npm test` or CI: a module takes minutes
// to tens of minutes on 2 cores. Scores and the survivors judged equivalent: docs/reliability.md
// ("Mutation testing").

import { MUTATION_MODULES as MODULES } from './scripts/mutation-modules.ts'

const name = process.env.STRYKER_MODULE ?? ''
const module = MODULES[name]
if (!module) {
  throw new Error(`STRYKER_MODULE must name one of: ${Object.keys(MODULES).join(', ')} (run it through npm run test:mutation)`)
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  // the vitest runner with its test selection working on vitest 5 (scripts/stryker-vitest5-runner.mjs)
  testRunner: 'vitest-5',
  vitest: {
    // the main suite's config plus the alias that makes `@lsv/shared` load the sandbox's mutated copy
    configFile: 'vitest.mutation.config.ts',
    // the module's test files are listed; no import-graph guessing
    related: false,
  },
  plugins: ['@stryker-mutator/vitest-runner', './scripts/stryker-vitest5-runner.mjs'],
  mutate: module.mutate,
  // The module's tests are vitest's `include` (vitest.mutation.config.ts), not `testFiles` (the
  // runner would turn a file list into a name filter that matches nothing). Each mutant runs only
  // the tests that reached it; one evaluated when a module loads (a constant) runs all of them.
  coverageAnalysis: 'perTest',
  // two cores, shared with other work: one worker unless --concurrency says otherwise
  concurrency: 1,
  timeoutMS: 20_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  // each module has its own sandbox folder (modules may run side by side); removed after the run
  tempDirName: `.stryker-tmp/${name}`,
  cleanTempDir: 'always',
  // only what the tests load is copied into the sandbox
  ignorePatterns: ['/docs', '/infra', '/deploy', '/bench', '/.tmp', '/.data*', '/*.md'],
  // a full run by default. `--incremental` re-runs only mutants whose code or covering tests
  // changed since the last run: quick while adding tests, but a static mutant (one evaluated when
  // its module loads) has no covering test, so its old result is kept even when a new test would
  // kill it; the scores in docs/reliability.md come from full runs
  incrementalFile: `.tmp/mutation/${name}/incremental.json`,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: `.tmp/mutation/${name}/report.html` },
  jsonReporter: { fileName: `.tmp/mutation/${name}/report.json` },
  thresholds: { high: 90, low: 85, break: null },
}

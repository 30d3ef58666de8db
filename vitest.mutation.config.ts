import { fileURLToPath } from 'node:url'
import { defineConfig, mergeConfig } from 'vitest/config'
import base from './vitest.config.ts'
import { MUTATION_MODULES } from './scripts/mutation-modules.ts'

/**
 * The main suite's config as StrykerJS runs it (stryker.config.mjs), for the module named by
 * `STRYKER_MODULE`:
 * - `include` is that module's test files only (the dry run runs them all; each mutant then runs
 *   the ones that reached it).
 * - Stryker copies the repo into a sandbox and mutates the copy, but `@lsv/shared` resolves through
 *   node_modules (a symlink to the ORIGINAL shared/): without the alias every test would load
 *   unmutated code and every mutant would survive. The alias points at the shared/src next to
 *   this file, i.e. the sandbox's copy.
 */
const module = MUTATION_MODULES[process.env.STRYKER_MODULE ?? '']
if (!module) throw new Error(`STRYKER_MODULE must name one of: ${Object.keys(MUTATION_MODULES).join(', ')}`)

const config = mergeConfig(
  base,
  defineConfig({
    resolve: {
      alias: [{ find: /^@lsv\/shared\//, replacement: fileURLToPath(new URL('./shared/src/', import.meta.url)) }],
    },
  }),
)
// replaced, not merged (mergeConfig would append to the main suite's include); one project, a
// process per file as Stryker's runner expects
config.test!.include = module.tests
delete config.test!.projects
export default config

/**
 * Globs a run leaves out of every project of the main vitest config (`npm run test:quick`:
 * scripts/run-tests.ts), comma separated in this variable. vitest's `--exclude` reaches the root
 * config only, not its projects (vitest.config.ts has two), so the config reads them from here.
 */
export const LEFT_OUT_ENV = 'LSV_TEST_LEAVE_OUT'

/** the globs the environment names (none when it names none) */
export function leftOut(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[LEFT_OUT_ENV] ?? '').split(',').filter(Boolean)
}

import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'

/**
 * The test command's counting (scripts/run-tests.ts, scripts/lib/vitest-summary-reporter.ts), run
 * on a fixture config (test/local/fixtures/run-tests.vitest.config.ts) whose files fail in their
 * set-up the ways a real suite does: a describe's beforeAll that throws (as when the browser
 * cannot start), a file-level beforeAll that throws, and a file that cannot be imported. Each
 * test that could not run is a failed test, the file that has none is one failure: the closing
 * line must not say "0 failed" (it used to count them as skipped, and end "0 failed" with exit 1).
 * The run also prints its slowest files.
 */

function runTests(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/run-tests.ts', '--no-emulators', '--no-typecheck', ...args], {
      env: { ...process.env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('exit', (code) => resolve({ code, out }))
  })
}

describe('npm test counts a suite that fails in its set-up as failed', () => {
  it('closing line, failure names and exit code', async () => {
    const r = await runTests(['--config', 'test/local/fixtures/run-tests.vitest.config.ts'])
    expect(r.code, r.out).toBe(1)
    // 1 passing test; 2 + 1 tests under a throwing beforeAll and 1 file that cannot be imported; the it.skip stays skipped
    expect(r.out).toMatch(/^tests: 1 passed, 4 failed, 1 skipped$/m)
    const failed = r.out.slice(r.out.lastIndexOf('failed:\n'))
    expect(failed).toContain(
      'test/local/fixtures/run-tests-set-up-throws.fixture.ts > a suite whose set-up throws > first: did not run, its set-up failed: set-up failed on purpose',
    )
    expect(failed).toContain(
      'test/local/fixtures/run-tests-file-set-up-throws.fixture.ts > needs the set-up: did not run, its set-up failed: file set-up failed on purpose',
    )
    expect(failed).toMatch(/test\/local\/fixtures\/run-tests-import-fails\.fixture\.ts: .*no-such-module\.ts/)
  }, 120_000)

  it('prints the slowest files of the run, each with its time', async () => {
    const r = await runTests(['--config', 'test/local/fixtures/run-tests.vitest.config.ts'])
    const table = r.out.slice(r.out.indexOf('slowest test files (of 3;'))
    for (const f of ['run-tests-set-up-throws', 'run-tests-file-set-up-throws', 'run-tests-import-fails']) {
      expect(table).toMatch(new RegExp(`test/local/fixtures/${f}\\.fixture\\.ts\\s+(\\d+\\.\\d s|\\d+ min \\d+ s)`))
    }
    expect(r.out).toMatch(/^the run took (\d+\.\d s|\d+ min \d+ s)$/m)
  }, 120_000)
})

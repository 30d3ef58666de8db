import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { stripVTControlCharacters } from 'node:util'

/**
 * The test command's filter (scripts/run-tests.ts): a path that selects no test file in any
 * config that runs must fail with a message (a mistyped path used to be a green run: vitest was
 * given --passWithNoTests whenever args were passed); a path selecting files of one config only
 * still passes.
 */

function runTests(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/run-tests.ts', '--no-emulators', '--no-typecheck', ...args], {
      env: { ...process.env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      out += d
    })
    child.on('exit', (code) => resolve({ code, out }))
  })
}

describe('npm test / test:quick with a filter', () => {
  it('a path matching no test file fails, naming the path and the configs', async () => {
    const quick = await runTests(['--quick', 'test/no-such-dir'])
    expect(quick.code).toBe(1)
    expect(quick.out).toContain('no test file matches test/no-such-dir in vitest.config.ts')
    expect(quick.out).toContain('tests: 0 passed, 1 failed')
    const both = await runTests(['test/no-such-dir/x.test.ts'])
    expect(both.code).toBe(1)
    expect(both.out).toContain('no test file matches test/no-such-dir/x.test.ts in vitest.config.ts or vitest.reliability.config.ts')
  }, 120_000)

  it('a reliability file under --quick (main config only) matches nothing there: it fails too', async () => {
    const r = await runTests(['--quick', 'test/reliability/open-redirect.test.ts'])
    expect(r.code).toBe(1)
    expect(r.out).toContain('no test file matches')
  }, 120_000)

  it('a path matching files of one config only passes (the other config selects none)', async () => {
    const r = await runTests(['test/setup/loopback-only.test.ts'])
    expect(r.out).not.toContain('no test file matches')
    expect(r.out).toMatch(/tests: [1-9]\d* passed, 0 failed/)
    expect(r.code).toBe(0)
  }, 120_000)
})

describe('npm test runs the untimed reliability group beside the main suites', () => {
  it('three passes: the main suites with the untimed group beside them (its output held), then the timed group; every pass counted', async () => {
    // a file of each pass that needs no emulator: the main suites, `reliability`, `reliability-serial`
    const r = await runTests(['test/setup/loopback-only.test.ts', 'test/reliability/open-redirect.test.ts', 'test/reliability/dead-owner-recovery.test.ts'])
    expect(r.code, r.out).toBe(0)
    // vitest's colours (FORCE_COLOR set, even to 0, turns them on)
    const out = stripVTControlCharacters(r.out)
    const at = (text: string) => {
      const i = out.indexOf(text)
      expect(i, `${text} in:\n${out}`).toBeGreaterThanOrEqual(0)
      return i
    }
    const besideStarts = at('> vitest --config vitest.reliability.config.ts --project reliability (--maxWorkers=1), beside the main suites')
    const mainStarts = at('> vitest --config vitest.config.ts (')
    const mainFile = at('test/setup/loopback-only.test.ts (')
    const besideOutput = at('> vitest --config vitest.reliability.config.ts --project reliability: its output (it ran beside the main suites')
    const besideFile = at('test/reliability/open-redirect.test.ts (')
    const serialStarts = at('> vitest --config vitest.reliability.config.ts --project reliability-serial')
    const serialFile = at('test/reliability/dead-owner-recovery.test.ts (')
    // started together; the held output printed in one piece after the main suites' (never within it)
    expect(besideStarts).toBeLessThan(mainStarts)
    expect(mainFile).toBeLessThan(besideOutput)
    expect(besideOutput).toBeLessThan(besideFile)
    expect(besideFile).toBeLessThan(serialStarts)
    expect(serialStarts).toBeLessThan(serialFile)
    // the closing line adds up each pass's own "Tests  N passed" (mutation: a pass not counted)
    const perPass = [...out.matchAll(/^\s+Tests\s+(\d+) passed/gm)].map((m) => Number(m[1]))
    expect(perPass).toHaveLength(3)
    expect(out).toMatch(new RegExp(`^tests: ${perPass.reduce((a, b) => a + b, 0)} passed, 0 failed$`, 'm'))
  }, 180_000)
})

import { afterAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

/**
 * `npm test` on a machine without Chromium (scripts/run-tests.ts): the portal's browser tests
 * need Debian's Chromium, which a fresh machine lacks. A process that may install packages (root,
 * with apt-get on PATH) installs it the way .ci/install-chromium does (that script); any other
 * stops at once, before the emulators and the tests, naming the one command to run.
 * CHROMIUM_PATH points both at a file that does not exist yet; a stand-in apt-get records its
 * calls and "installs" that file, so nothing is installed on this machine.
 */

const dir = mkdtempSync(join(tmpdir(), 'lsv-chromium-check-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** a run that selects a browser test file that does not exist: it ends quickly either way */
function runTests(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/run-tests.ts', '--quick', '--no-emulators', '--no-typecheck', 'test/browser/no-such-screen.test.ts'], {
      env: { ...process.env, FORCE_COLOR: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    child.on('exit', (code) => resolve({ code, out }))
  })
}

describe('npm test without Chromium', () => {
  it('cannot install it (no apt-get on PATH, or not root): stops at once with the command that installs it', async () => {
    const chromium = join(dir, 'missing', 'chromium')
    // only node's own folder on PATH: no apt-get
    const tmp = mkdtempSync(join(dir, 'tmp-'))
    const r = await runTests({ CHROMIUM_PATH: chromium, PATH: dirname(process.execPath), TMPDIR: tmp })
    expect(r.code, r.out).toBe(1)
    expect(r.out).toContain(`${chromium} is missing`)
    expect(r.out).toContain('sudo apt-get update && sudo apt-get install -y chromium')
    expect(r.out).toMatch(/^tests: 0 passed, 1 failed$/m)
    // stopped before anything else: no vitest pass began
    expect(r.out).not.toContain('> vitest')
    // and the run's own temporary folder went with it (an exit before the tests too)
    expect(readdirSync(tmp)).toEqual([])
  }, 60_000)

  it('may install packages (root with apt-get): installs it through .ci/install-chromium, then runs the tests', async () => {
    const chromium = join(dir, 'installed', 'chromium')
    const bin = join(dir, 'bin')
    const calls = join(dir, 'apt-get-calls')
    rmSync(bin, { recursive: true, force: true })
    // the stand-in: records each call; `install … chromium` puts an executable where Debian's would be
    const aptGet = `#!/bin/sh\necho "$*" >> '${calls}'\ncase "$*" in *install*chromium*) mkdir -p '${dirname(chromium)}' && printf '#!/bin/sh\\n' > '${chromium}' && chmod +x '${chromium}';; esac\n`
    mkdirSync(bin, { recursive: true })
    writeFileSync(join(bin, 'apt-get'), aptGet)
    chmodSync(join(bin, 'apt-get'), 0o755)
    const r = await runTests({ CHROMIUM_PATH: chromium, PATH: `${bin}:${process.env.PATH}` })
    expect(r.code, r.out).toBe(1)
    if (process.getuid?.() === 0) {
      expect(r.out).toContain(`installing Debian's chromium (${chromium} is missing`)
      expect(readFileSync(calls, 'utf8').trim().split('\n')).toEqual(['update -qq', 'install -y -qq chromium'])
      expect(existsSync(chromium)).toBe(true)
      // then the run went on to the tests (this filter selects none, which fails)
      expect(r.out).toContain('no test file matches test/browser/no-such-screen.test.ts')
    } else {
      // not root: it may not install, so it stops as above and apt-get is never called
      expect(r.out).toContain('sudo apt-get update && sudo apt-get install -y chromium')
      expect(existsSync(calls)).toBe(false)
    }
  }, 60_000)
})

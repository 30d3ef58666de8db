import { afterAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { alive } from '../../scripts/lib/process-tree.ts'

/**
 * The test command stops what its tests started and left running, by pid (scripts/run-tests.ts,
 * `stopLeftovers` and `stopAll`): a fixture file starts `sleep` in a session of its own, as
 * gcloud starts an emulator, and never stops it. At the run's end the process is stopped and
 * named; on Ctrl-C (SIGINT to the run's process group, as a terminal sends it) it is stopped too,
 * though its test worker died before any afterAll. Without the sweep the process outlives the run.
 * The fixture also leaves a folder in its temporary folder: the run's own (TMPDIR), named at the
 * end and removed whole, on Ctrl-C too, so the machine's temporary folder keeps nothing of it.
 */

const dir = mkdtempSync(join(tmpdir(), 'lsv-leftovers-'))
const started: number[] = []

async function waitFor<T>(what: string, probe: () => T | undefined, ms: number): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = probe()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

function runTests(mode: 'leave' | 'hang', pidFile: string) {
  const child = spawn(
    process.execPath,
    ['scripts/run-tests.ts', '--no-emulators', '--no-typecheck', '--config', 'test/local/fixtures/leftover-process.vitest.config.ts'],
    // its own process group, so a Ctrl-C can be sent to the run's group as a terminal does
    { env: { ...process.env, FORCE_COLOR: '0', LEFTOVER_MODE: mode, LEFTOVER_PID_FILE: pidFile }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  )
  let out = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (out += d))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, exited, out: () => out }
}

/** the fixture's pid file: the process's pid, then the folder it left */
const leftIn = (file: string) => {
  const [pid, folder] = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []
  return pid && folder ? { pid: Number(pid), folder } : undefined
}

afterAll(() => {
  // a failing case must not leave its sleep behind either
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

describe('npm test stops what its tests left running', () => {
  it('at the end of the run: stopped by pid and named', async () => {
    const pidFile = join(dir, 'leave.pid')
    const run = runTests('leave', pidFile)
    const code = await run.exited
    const { pid, folder } = await waitFor('the fixture to write its pid', () => leftIn(pidFile), 1000)
    started.push(pid)
    expect(code, run.out()).toBe(0)
    expect(run.out()).toMatch(new RegExp(`^> left running by the tests, now stopped \\(1\\):\\n  ${pid} sleep 300$`, 'm'))
    expect(alive(pid)).toBe(false)
    // the folder was made in the run's own temporary folder, named at the end, and removed with it
    expect(dirname(dirname(folder))).toBe(tmpdir())
    expect(basename(dirname(folder))).toMatch(/^lsv-run-/)
    expect(run.out()).toMatch(new RegExp(`^> left in the run's temporary folder by the tests, now removed \\(1\\):\\n  ${basename(folder)}$`, 'm'))
    expect(existsSync(dirname(folder))).toBe(false)
  }, 120_000)

  it('on Ctrl-C: stopped although its test worker died before any clean-up', async () => {
    const pidFile = join(dir, 'hang.pid')
    const run = runTests('hang', pidFile)
    const { pid, folder } = await waitFor('the fixture to start its process', () => leftIn(pidFile), 60_000)
    started.push(pid)
    expect(alive(pid)).toBe(true)
    process.kill(-run.child.pid!, 'SIGINT')
    const code = await run.exited
    expect(code, run.out()).toBe(130)
    await waitFor('the left process to be stopped', () => (alive(pid) ? undefined : true), 5000)
    expect(existsSync(dirname(folder))).toBe(false)
  }, 120_000)
})

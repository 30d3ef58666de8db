import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * bench/lib/emulators.ts: a bench that dies before stop() (an unhandled rejection of a client
 * library did, twice) must not leave the java emulators it started running on the machine.
 */
describe('bench emulators', () => {
  it('are stopped by pid, the whole chain, when the bench process dies of an uncaught exception; their logs go too', async () => {
    // the fixture's temporary folder, of its own: what it leaves there is seen
    const scratch = mkdtempSync(join(tmpdir(), 'lsv-emulators-exit-'))
    const result = await run(process.execPath, ['test/bench/fixtures/crash-after-emulator.ts'], {
      timeout: 120_000,
      env: { ...process.env, TMPDIR: scratch },
    }).catch((err: { stdout: string; code: number }) => err)
    const logFolders = readdirSync(scratch).filter((name) => name.startsWith('lsv-bench-emulators-'))
    rmSync(scratch, { recursive: true, force: true })
    const stdout = String(result.stdout)
    const chain = (/CHAIN ([\d ]+)/.exec(stdout)?.[1] ?? '').trim().split(' ').map(Number)
    expect(chain.length, stdout).toBeGreaterThan(1)
    expect((result as { code?: number }).code, 'the fixture crashed').not.toBe(0)
    // the gcloud wrapper's java child outlives it: every process of the chain must be gone
    const deadline = Date.now() + 15_000
    let left = chain.filter(alive)
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200))
      left = left.filter(alive)
    }
    // a failing run must not leave them either: whatever is left is stopped here, by pid
    for (const p of left) process.kill(p, 'SIGKILL')
    // mutation: no exit handler in benchEmulators → the wrapper and its java child stay
    expect(left).toEqual([])
    // mutation: the exit handler without its rmSync → the emulators' logs folder stays (one a crash, found on 2026-11-29)
    expect(logFolders).toEqual([])
  }, 150_000)
})

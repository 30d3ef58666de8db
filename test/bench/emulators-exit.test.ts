import { execFile } from 'node:child_process'
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
  it('are stopped by pid, the whole chain, when the bench process dies of an uncaught exception', async () => {
    const result = await run(process.execPath, ['test/bench/fixtures/crash-after-emulator.ts'], { timeout: 120_000 }).catch(
      (err: { stdout: string; code: number }) => err,
    )
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
  }, 150_000)
})

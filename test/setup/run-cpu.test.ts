import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { cpuSnapshot, cpuUseSince, formatCpuUse } from '../../scripts/lib/run-cpu.ts'

/**
 * The run's CPU line (scripts/run-tests.ts, scripts/lib/run-cpu.ts): the CPU of the test run's
 * own processes, those that ended (the vitest passes) and those still running (the emulators).
 * A child here spins for about 400 ms of CPU and reports what it used; the figure must grow by
 * at least that, whether the child is still alive or already reaped. No wall-clock bound: only
 * the child's own CPU count against ours.
 */

/** a node child that spins until it used ~400 ms of CPU, prints it (µs), then waits for stdin to close */
function spinner() {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const t = process.cpuUsage(); const used = () => { const u = process.cpuUsage(t); return u.user + u.system };
       let x = 0; while (used() < 400000) for (let i = 0; i < 1e5; i++) x += Math.sqrt(i);
       process.stdout.write(String(used()) + '\\n'); process.stdin.resume()`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  )
  const used = new Promise<number>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()) / 1e6)))
  return { child, used }
}

describe.skipIf(!existsSync('/proc/stat'))('the run CPU line', () => {
  it("counts a child's CPU while it runs and after it ended and was reaped", async () => {
    const start = cpuSnapshot()
    const before = cpuUseSince(start, 2)!.ownSeconds
    const { child, used } = spinner()
    const spent = await used
    // alive: counted as a live descendant
    const alive = cpuUseSince(start, 2)!.ownSeconds
    expect(alive - before).toBeGreaterThanOrEqual(spent * 0.9)
    child.stdin.end()
    await once(child, 'exit')
    // ended and reaped: counted in this process's children's times
    const after = cpuUseSince(start, 2)!
    expect(after.ownSeconds - before).toBeGreaterThanOrEqual(spent * 0.9)
    expect(after.busyPercent).toBeGreaterThan(0)
    expect(formatCpuUse(after, 2)).toMatch(
      /^cpu: the 2 cores \d+ % busy over the run \(every process on the machine\); the run's own processes \d+ CPU s, \d+ % of the cores$/,
    )
  })
})

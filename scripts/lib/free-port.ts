import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Ports for the servers a test or script starts by number (a stack given EDGE_PORT, an emulator
 * given --host-port): the number is chosen here and bound later, by another process.
 *
 * "Listen on 0, close, reuse the number" raced: the kernel hands the same ephemeral numbers to
 * every `listen(0)` and to every outgoing connection's local end, so with two test files at a time
 * another file took the number before the stack listened (EADDRINUSE). So a port comes
 * - from outside the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), where
 *   neither `listen(0)` nor an outgoing connection ever lands;
 * - from its own block per vitest worker (`VITEST_POOL_ID`; 0 outside vitest: run-tests.ts and its
 *   emulators), so parallel files start far apart;
 * - claimed in a file of its own (`<tmp>/lsv-ports-<uid>/<port>`, created exclusively, holding the
 *   pid), so two processes never take one number, whichever block they start in (a stack that
 *   picks its emulators' ports inherits its test's pool id; `npm test` runs inside a test);
 *   a claim is released when its process exits, and the claim of a dead pid is taken over;
 * - and free when probed: bound on every IPv4 address for a moment (a foreign server on it is
 *   skipped).
 */

/** ports handed out per worker block before the next block begins (the scan goes on past it) */
const BLOCK = 500
/**
 * Machine-wide, whatever TMPDIR says: `npm test` gives each run a temporary folder of its own
 * (scripts/run-tests.ts) and names this one in PORT_CLAIMS_ENV, so the run's processes, the
 * stacks its tests start and any other run on the machine all claim ports in one place.
 */
export const PORT_CLAIMS_ENV = 'LSV_PORT_CLAIMS_DIR'
export const CLAIMS = process.env[PORT_CLAIMS_ENV] || join(tmpdir(), `lsv-ports-${process.getuid?.() ?? 'user'}`)
const claimed = new Set<number>()
let cursor: number | undefined

/** The kernel's ephemeral range; IANA's dynamic range where /proc does not say (macOS, Windows). */
function ephemeralRange(): { low: number; high: number } {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
    if (low && high && low <= high) return { low, high }
  } catch {
    // not Linux
  }
  return { low: 49152, high: 65535 }
}

/** Where ports are handed out: from 20000 up to the ephemeral range, or above it when that leaves too little. */
export function portRange(ephemeral = ephemeralRange()): { low: number; high: number } {
  if (ephemeral.low - 20000 >= 4 * BLOCK) return { low: 20000, high: ephemeral.low - 1 }
  return { low: ephemeral.high + 1, high: 65535 }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Creates the claim file of `port` for this process; false if a living process holds it. */
function claim(port: number): boolean {
  const file = join(CLAIMS, String(port))
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, String(process.pid))
      closeSync(fd)
      return true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    let holder = Number.NaN
    try {
      holder = Number(readFileSync(file, 'utf8'))
    } catch {
      // released between the two calls: try again
    }
    // a claim being written (empty yet) or held by a living process is not ours
    if (holder > 0 && !alive(holder)) unlinkSync(file)
    else if (!Number.isNaN(holder)) return false
  }
  return false
}

function release(port: number): void {
  claimed.delete(port)
  try {
    unlinkSync(join(CLAIMS, String(port)))
  } catch {
    // already gone
  }
}

/** Whether nothing listens on `port` on any IPv4 address (nor on IPv6's any address, dual-stack). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer()
    srv.unref()
    srv.once('error', () => resolve(false))
    srv.listen({ port, host: '0.0.0.0', exclusive: true }, () => srv.close(() => resolve(true)))
  })
}

process.once('exit', () => {
  for (const port of claimed) release(port)
})

/** A loopback port no other process has been handed and nothing listens on; it stays this process's until it exits. */
export async function freePort(): Promise<number> {
  const { low, high } = portRange()
  const span = high - low + 1
  mkdirSync(CLAIMS, { recursive: true })
  const slot = Number(process.env.VITEST_POOL_ID) || 0
  cursor ??= (slot * BLOCK) % span
  for (let tried = 0; tried < span; tried++) {
    const port = low + (cursor % span)
    cursor = (cursor + 1) % span
    if (!claim(port)) continue
    claimed.add(port)
    if (await bindable(port)) return port
    release(port)
  }
  throw new Error(`no free port left in ${low}-${high} (claims in ${CLAIMS})`)
}

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** process CPU time (user + system, every thread) in µs */
export const processCpuUs = (): number => {
  const u = process.cpuUsage()
  return u.user + u.system
}

/**
 * Waits until the process is idle again (a 50 ms window in which all its threads used under 2 ms
 * of CPU; at most `maxMs`) and returns the process's CPU time (µs) at the start of that window.
 * A measured run is charged up to there: the work it left behind (WAL checkpoints on the
 * embedded database's maintenance thread, spans still to export, a sync) is its own, and the next
 * run starts on an idle process instead of paying for it.
 */
export async function quietFrom(maxMs = 3000): Promise<number> {
  const deadline = performance.now() + maxMs
  for (;;) {
    const before = processCpuUs()
    await new Promise((r) => setTimeout(r, 50))
    if (processCpuUs() - before < 2000 || performance.now() > deadline) return before
  }
}

setFlagsFromString('--expose-gc')
/**
 * A full garbage collection now (the flag set at run time; `gc` taken from a new context, where
 * V8 installs it once the flag is on). Before a timed run, so it does not collect what the run
 * before it left: without it the dispatch bench's platform run that followed another platform run
 * paid for that one's old generation, and rounds run in one order read ~12 % below the other.
 */
export const fullGc = runInNewContext('gc') as () => void

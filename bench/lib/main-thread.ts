import { performance } from 'node:perf_hooks'

/** What a timed run asked of the main thread, per operation. */
export interface MainThreadUse {
  /** the main thread's CPU time (user + system) per operation, µs */
  cpuUs: number
  /** wall-clock time per operation, µs */
  wallUs: number
  /** the event loop's utilization over the run (near 1: the run is bound by this thread) */
  busy: number
  /** `cpu/wall µs, busy %`, as the benches print it */
  text: string
}

export const noUse: MainThreadUse = { cpuUs: 0, wallUs: 0, busy: 0, text: '-' }

/**
 * Measures the main thread over a timed run: its own CPU time (process.threadCpuUsage: not the
 * worker threads', which process CPU includes), the wall time and the event loop's utilization.
 * A run whose loop is busy near 100 % is bound by this thread's CPU, and CPU below wall time on
 * such a loop is time spent blocked inside synchronous calls or waiting for a core.
 */
export function mainThreadMeter(): { per(operations: number): MainThreadUse } {
  const started = performance.now()
  const elu = performance.eventLoopUtilization()
  const cpu = process.threadCpuUsage()
  return {
    per(operations) {
      const wallUs = ((performance.now() - started) * 1000) / operations
      const used = process.threadCpuUsage(cpu)
      const cpuUs = (used.user + used.system) / operations
      const busy = performance.eventLoopUtilization(elu).utilization
      return { cpuUs, wallUs, busy, text: `CPU/wall ${cpuUs.toFixed(0)}/${wallUs.toFixed(0)} µs, loop busy ${(100 * busy).toFixed(0)}%` }
    },
  }
}

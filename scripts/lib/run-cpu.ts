import { existsSync, readFileSync } from 'node:fs'
import { descendantsOf } from './process-tree.ts'

/**
 * What a test run cost in CPU, from /proc (Linux; elsewhere nothing is printed): the machine's
 * busy share over the run (every process, ours or not: on a quiet machine, the run's), and the
 * CPU seconds of the run's own process tree (this process, the children it waited for, and the
 * ones still alive such as the emulators). Whether a run is CPU-bound decides what shortens it:
 * a run whose cores are saturated gets shorter only with less work, not with more parallelism.
 */

/** Linux's USER_HZ: the unit of /proc's CPU times (100 on every architecture Node supports) */
const TICKS_PER_SECOND = 100

export interface CpuSnapshot {
  at: number
  /** /proc/stat's first line: ticks busy and in all, over every core */
  busy: number
  total: number
}

export function cpuSnapshot(): CpuSnapshot | null {
  if (!existsSync('/proc/stat')) return null
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  // user nice system idle iowait irq softirq steal …: idle and iowait are not busy
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0)
  const idle = fields[3]! + fields[4]!
  return { at: Date.now(), busy: total - idle, total }
}

/** utime + stime + cutime + cstime (the children it waited for) of one process, in seconds */
function secondsOf(pid: number | 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // fields after the command name (which may hold spaces): state is [0], utime [11] … cstime [14]
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
    return (f[11]! + f[12]! + f[13]! + f[14]!) / TICKS_PER_SECOND
  } catch {
    return 0 // ended while we looked
  }
}

export interface CpuUse {
  /** the machine's cores busy since the snapshot, in percent (every process on the machine) */
  busyPercent: number
  /** CPU seconds of this process tree so far (not since the snapshot: a run's tree starts with it) */
  ownSeconds: number
  /** ownSeconds as a share of the cores over the wall time since the snapshot, in percent */
  ownPercent: number
}

/** The machine's busy share since `start` and the CPU seconds of this process tree; null without /proc. */
export function cpuUseSince(start: CpuSnapshot | null, cores: number): CpuUse | null {
  const end = cpuSnapshot()
  if (!start || !end) return null
  const ticks = end.total - start.total
  // this process and the children it reaped, plus each live descendant and the children it reaped
  // (a process is counted once: in its parent's reaped times once ended, on its own while alive)
  const ownSeconds = secondsOf('self') + descendantsOf(process.pid).reduce((sum, pid) => sum + secondsOf(pid), 0)
  const wall = Math.max(0.001, (end.at - start.at) / 1000)
  return { busyPercent: ticks > 0 ? (100 * (end.busy - start.busy)) / ticks : 0, ownSeconds, ownPercent: (100 * ownSeconds) / (wall * cores) }
}

export function formatCpuUse(use: CpuUse, cores: number): string {
  return `cpu: the ${cores} cores ${use.busyPercent.toFixed(0)} % busy over the run (every process on the machine); the run's own processes ${Math.round(use.ownSeconds)} CPU s, ${use.ownPercent.toFixed(0)} % of the cores`
}

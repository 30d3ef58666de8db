/**
 * Emulators for a bench: the ones named in the environment (FIRESTORE_EMULATOR_HOST,
 * PUBSUB_EMULATOR_HOST) when set, otherwise started here (scripts/lib/emulators.ts, free ports,
 * logs in a temp folder) and stopped by pid by `stop()`. A fresh emulator is also what makes the
 * Firestore figures comparable: it slows as it fills.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEmulator, type RunningEmulator } from '../../scripts/lib/emulators.ts'
import { descendantsOf } from '../../scripts/lib/process-tree.ts'

export interface BenchEmulators {
  firestore?: string
  pubsub?: string
  /** what was started here, for the report */
  started: string[]
  /**
   * CPU ms (user + system) used so far by the emulators started here, each with its java
   * children; null when none was started here (given by the environment: their pids are unknown).
   */
  cpuMs(): number | null
  stop(): Promise<void>
}

/** USER_HZ: /proc counts CPU time in ticks of 1/100 s on Linux */
const MS_PER_TICK = 10

/** CPU ms of one process from /proc (0 once it has ended) */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // fields after the command name: utime and stime are the 12th and 13th
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK
  } catch {
    return 0
  }
}

const ENV_OF = { firestore: 'FIRESTORE_EMULATOR_HOST', pubsub: 'PUBSUB_EMULATOR_HOST' } as const

export async function benchEmulators(kinds: Array<'firestore' | 'pubsub'>, project: string): Promise<BenchEmulators> {
  const logDir = mkdtempSync(join(tmpdir(), 'lsv-bench-emulators-'))
  const running: RunningEmulator[] = []
  // a bench that dies before stop() (an unhandled rejection of a client library) must not leave
  // its emulators behind: on exit, however it comes, each started one's chain gets SIGTERM by pid,
  // and their logs' folder goes too
  const stopOnExit = () => {
    for (const e of running) {
      for (const pid of e.child.pid ? [e.child.pid, ...descendantsOf(e.child.pid)] : []) {
        try {
          process.kill(pid, 'SIGTERM')
        } catch {
          /* already gone */
        }
      }
    }
    rmSync(logDir, { recursive: true, force: true })
  }
  process.once('exit', stopOnExit)
  const out: BenchEmulators = {
    started: [],
    cpuMs() {
      if (running.length === 0) return null
      let ms = 0
      for (const e of running) for (const pid of e.child.pid ? [e.child.pid, ...descendantsOf(e.child.pid)] : []) ms += processCpuMs(pid)
      return ms
    },
    async stop() {
      process.off('exit', stopOnExit)
      await Promise.all(running.map((e) => e.stop()))
      rmSync(logDir, { recursive: true, force: true })
    },
  }
  try {
    await Promise.all(
      kinds.map(async (kind) => {
        const given = process.env[ENV_OF[kind]]
        if (given) {
          out[kind] = given
          return
        }
        // the JVM's defaults (C2 included): figures comparable with earlier runs (scripts/lib/emulators.ts)
        const emulator = await startEmulator(kind, logDir, project, { jvmDefaults: true })
        running.push(emulator)
        out[kind] = emulator.hostPort
        out.started.push(`${kind} ${emulator.hostPort} (pid ${emulator.child.pid})`)
      }),
    )
  } catch (err) {
    await out.stop()
    throw err
  }
  return out
}

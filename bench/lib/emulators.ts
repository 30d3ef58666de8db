/**
 * Emulators for a bench: the ones named in the environment (FIRESTORE_EMULATOR_HOST,
 * PUBSUB_EMULATOR_HOST) when set, otherwise started here (scripts/lib/emulators.ts, free ports,
 * logs in a temp folder) and stopped by pid by `stop()`. A fresh emulator is also what makes the
 * Firestore figures comparable: it slows as it fills.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEmulator, type RunningEmulator } from '../../scripts/lib/emulators.ts'
import { descendantsOf } from '../../scripts/lib/process-tree.ts'

export interface BenchEmulators {
  firestore?: string
  pubsub?: string
  /** what was started here, for the report */
  started: string[]
  stop(): Promise<void>
}

const ENV_OF = { firestore: 'FIRESTORE_EMULATOR_HOST', pubsub: 'PUBSUB_EMULATOR_HOST' } as const

export async function benchEmulators(kinds: Array<'firestore' | 'pubsub'>, project: string): Promise<BenchEmulators> {
  const logDir = mkdtempSync(join(tmpdir(), 'lsv-bench-emulators-'))
  const running: RunningEmulator[] = []
  // a bench that dies before stop() (an unhandled rejection of a client library) must not leave
  // its emulators behind: on exit, however it comes, each started one's chain gets SIGTERM by pid
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
  }
  process.once('exit', stopOnExit)
  const out: BenchEmulators = {
    started: [],
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
        const emulator = await startEmulator(kind, logDir, project)
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

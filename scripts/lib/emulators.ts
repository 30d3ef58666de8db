import { spawn, type ChildProcess } from 'node:child_process'
import { openSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from './free-port.ts'
import { killTree } from './process-tree.ts'

export interface RunningEmulator {
  name: string
  hostPort: string
  child: ChildProcess
  stop(): Promise<void>
}

async function waitReady(hostPort: string, child: ChildProcess, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} emulator exited early with code ${child.exitCode}`)
    try {
      const res = await fetch(`http://${hostPort}/`, { signal: AbortSignal.timeout(1000) })
      if (res.ok) return
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`${name} emulator did not answer on ${hostPort} within ${timeoutMs} ms`)
}

/** Starts one gcloud emulator on a free port; logs go to `<logDir>/<name>.log`. */
export async function startEmulator(kind: 'firestore' | 'pubsub', logDir: string, project: string): Promise<RunningEmulator> {
  const port = await freePort()
  const hostPort = `127.0.0.1:${port}`
  mkdirSync(logDir, { recursive: true })
  const log = openSync(join(logDir, `${kind}-emulator.log`), 'w')
  const args =
    kind === 'firestore'
      ? ['emulators', 'firestore', 'start', `--host-port=${hostPort}`]
      : ['beta', 'emulators', 'pubsub', 'start', `--host-port=${hostPort}`, `--project=${project}`]
  const child = spawn('gcloud', args, { stdio: ['ignore', log, log], env: { ...process.env, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' } })
  const emulator: RunningEmulator = {
    name: kind,
    hostPort,
    child,
    stop: () => (child.pid ? killTree(child.pid) : Promise.resolve()),
  }
  try {
    await waitReady(hostPort, child, kind, 90_000)
  } catch (err) {
    await emulator.stop()
    throw err
  }
  return emulator
}

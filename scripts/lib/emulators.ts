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

/**
 * The emulators' JVM options (JAVA_TOOL_OPTIONS) unless a caller asks for the JVM's defaults:
 * C1 only (no C2 compiler) and the serial collector. Measured on this 2-core machine, five
 * Firestore- and Pub/Sub-heavy conformance files run twice against a fresh pair: the default JVMs
 * used 49.7 s of CPU, of which the Firestore emulator's C2 compiler threads alone took 21.7 s
 * (its request threads 4.4 s); with these options 20.9 s, the same 107 tests passing, no slower.
 * Idle, either pair uses ~0.1 s of CPU a minute: the JVMs do not spin, the compiler is the cost.
 * A long, heavy run (a benchmark) may want C2's faster code: it passes `jvmDefaults`.
 */
const EMULATOR_JAVA_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC'

/** The environment of the gcloud process that starts an emulator (and of the JVM it runs). */
export function emulatorEnv(base: NodeJS.ProcessEnv, options: { jvmDefaults?: boolean } = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, CLOUDSDK_CORE_DISABLE_PROMPTS: '1' }
  // options the caller's environment sets for Java win (the JVM reads one JAVA_TOOL_OPTIONS)
  if (!options.jvmDefaults && env.JAVA_TOOL_OPTIONS === undefined) env.JAVA_TOOL_OPTIONS = EMULATOR_JAVA_OPTIONS
  return env
}

/** Starts one gcloud emulator on a free port; logs go to `<logDir>/<name>.log`. */
export async function startEmulator(
  kind: 'firestore' | 'pubsub',
  logDir: string,
  project: string,
  options: { jvmDefaults?: boolean } = {},
): Promise<RunningEmulator> {
  const port = await freePort()
  const hostPort = `127.0.0.1:${port}`
  mkdirSync(logDir, { recursive: true })
  const log = openSync(join(logDir, `${kind}-emulator.log`), 'w')
  const args =
    kind === 'firestore'
      ? ['emulators', 'firestore', 'start', `--host-port=${hostPort}`]
      : ['beta', 'emulators', 'pubsub', 'start', `--host-port=${hostPort}`, `--project=${project}`]
  const child = spawn('gcloud', args, { stdio: ['ignore', log, log], env: emulatorEnv(process.env, options) })
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

/**
 * The four services as four processes, each started with the command its image runs (read from
 * the Dockerfile: `node main.mjs`, where main.mjs imports services/<SERVICE>/src/server.ts) and
 * exactly the environment it is given, nothing inherited. Each runs in its own process group
 * with its output in `<logs>/<service>.log`; stopping one signals its group by pid. Once ready, a
 * service that exits is replaced by a new instance, as Cloud Run replaces a crashed container
 * (superviseService), with a growing wait while new instances fail to get ready.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'

/**
 * Throws when `port` is taken: another stack (say `npm start`) answering /healthz there would
 * otherwise pass for the service that failed to bind.
 */
export async function assertPortFree(port: number, service: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(`port ${port} of ${service} is in use (${err.code ?? err.message}); stop what runs there or choose another port`))
    })
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve()))
  })
}

/** What the image runs for `service`, as a script path relative to the repository root. */
function imageEntryPoint(root: string, service: string): string {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  const cmd = /^CMD\s+\[\s*"node"\s*,\s*"main\.mjs"\s*\]\s*$/m.test(dockerfile)
  const entry = /printf\s+'import\s+"\.\/([^"]*%s[^"]*)"\\n'\s+"\$\{SERVICE\}"\s*>\s*\/app\/main\.mjs/.exec(dockerfile)
  if (!cmd || !entry) {
    throw new Error(
      'Dockerfile: start:cloud expects CMD ["node", "main.mjs"] with main.mjs importing services/<SERVICE>/…; it cannot tell what the image runs now (scripts/lib/cloud/service-processes.ts)',
    )
  }
  const script = entry[1]!.replace('%s', service)
  if (!existsSync(join(root, script))) throw new Error(`Dockerfile: the image of ${service} runs ${script}, which does not exist`)
  return script
}

export interface ServiceProcess {
  name: string
  port: number
  logFile: string
  child: ChildProcess
  /** resolves when the process has exited */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** SIGTERM to the group, SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<void>
  /** SIGKILL to the group: what a dead instance may have left behind (its port must be free again) */
  killGroup(): void
}

export function startServiceProcess(options: {
  root: string
  name: string
  port: number
  env: Record<string, string>
  logDir: string
  /** a new instance after a crash: its output goes after the old one's, behind this line (JSON, Cloud Logging's shape) */
  continueLogWith?: string
}): ServiceProcess {
  const logFile = join(options.logDir, `${options.name}.log`)
  const fd = openSync(logFile, options.continueLogWith ? 'a' : 'w')
  if (options.continueLogWith) {
    writeSync(fd, `${JSON.stringify({ severity: 'WARNING', time: new Date().toISOString(), message: options.continueLogWith })}\n`)
  }
  const child = spawn(process.execPath, [imageEntryPoint(options.root, options.name)], {
    cwd: options.root,
    env: options.env,
    stdio: ['ignore', fd, fd],
    detached: true, // its own process group, so a stop reaches everything it started
  })
  closeSync(fd)
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
    child.once('error', () => resolve({ code: null, signal: null }))
  })
  const signalGroup = (signal: NodeJS.Signals) => {
    if (!child.pid) return
    try {
      process.kill(-child.pid, signal)
    } catch {
      // already gone
    }
  }
  return {
    name: options.name,
    port: options.port,
    logFile,
    child,
    exited,
    async stop(graceMs = 12_000) {
      if (child.exitCode !== null || child.signalCode !== null) return
      signalGroup('SIGTERM')
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
    },
    killGroup: () => signalGroup('SIGKILL'),
  }
}

/** The lines of a service's log that say why it stopped (a configuration error, else the tail). */
function whyItStopped(logFile: string): string {
  let text = ''
  try {
    text = readFileSync(logFile, 'utf8')
  } catch {
    return '(no log)'
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  const config = lines.filter((l) => /configuration error/i.test(l))
  if (config.length > 0) return config.join('\n')
  const errors = lines.filter((l) => /"severity":"(ERROR|CRITICAL|ALERT|EMERGENCY)"|Error/.test(l))
  return (errors.length > 0 ? errors : lines).slice(-5).join('\n')
}

/** Resolves once GET /healthz answers 200; rejects when the process exits first or time runs out. */
export async function waitHealthy(p: ServiceProcess, timeoutMs: number, abort?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let gone = false
  void p.exited.then(() => (gone = true))
  while (Date.now() < deadline) {
    abort?.throwIfAborted()
    if (gone) {
      const { code, signal } = await p.exited
      throw new Error(
        `${p.name} exited with ${signal ? `signal ${signal}` : `code ${code}`} before it answered /healthz:\n${whyItStopped(p.logFile)}\n(full log: ${p.logFile})`,
      )
    }
    try {
      const res = await fetch(`http://127.0.0.1:${p.port}/healthz`, { signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`${p.name} did not answer /healthz on port ${p.port} within ${Math.round(timeoutMs / 1000)} s (log: ${p.logFile})`)
}

/**
 * Exits of one service tolerated within the window before start:cloud calls it a crash loop and
 * restarts it no more. Cloud Run itself keeps replacing a crashing instance (with a growing
 * delay); locally a loop means a bug to look at, and its log would only grow.
 */
const CRASH_LOOP = { restarts: 5, windowMs: 10 * 60_000 }
/** Before the n-th new instance in a row that did not get ready: 0 for the first, then 1 s, 2 s, … at most 30 s. */
const RESTART_BACKOFF = { firstMs: 1_000, maxMs: 30_000 }

export interface SupervisedService {
  name: string
  port: number
  /** the instance running now (a new one after each restart) */
  current(): ServiceProcess
  /** restarts so far */
  restarts(): number
  /** stops the instance and restarts no more */
  stop(): Promise<void>
}

/**
 * Keeps a service that has answered /healthz running, as Cloud Run does: when its instance exits
 * (a crash, a kill, even exit 0) or a new instance does not get ready (it exits first, or is not
 * healthy in time), the group's leftovers are killed and a new instance starts with the same
 * command and environment, its output appended to the same log behind a line saying so. New
 * instances that keep failing wait longer each time (RESTART_BACKOFF). Nothing else is stopped:
 * the emulators hold the run's data in memory, and the other services keep serving.
 * `crashLoop` is called once, and the service is restarted no more, when it exited more than
 * CRASH_LOOP.restarts times within CRASH_LOOP.windowMs (the reason, with its log's last lines).
 */
export function superviseService(
  first: ServiceProcess,
  startAgain: (note: string) => ServiceProcess,
  options: {
    say(line: string): void
    crashLoop(reason: string): void
    crashLoopBound?: typeof CRASH_LOOP
    backoff?: typeof RESTART_BACKOFF
    startTimeoutMs?: number
  },
): SupervisedService {
  const bound = options.crashLoopBound ?? CRASH_LOOP
  const backoff = options.backoff ?? RESTART_BACKOFF
  let current = first
  let stopping = false
  let restarts = 0
  const exits: number[] = []
  let wake: (() => void) | null = null
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        wake = null
        resolve()
      }
      wake = done
    })
  const howOf = ({ code, signal }: { code: number | null; signal: NodeJS.Signals | null }) => (signal ? `signal ${signal}` : `code ${code}`)
  /**
   * One exit of `instance` (`how`, and whether `after` or `before` it was ready): a new instance,
   * after a wait when `unready` instances in a row did not get ready.
   */
  const replace = async (instance: ServiceProcess, how: string, phase: string, unready: number): Promise<void> => {
    const now = Date.now()
    exits.push(now)
    while (exits[0]! < now - bound.windowMs) exits.shift()
    if (exits.length > bound.restarts) {
      stopping = true
      options.crashLoop(
        `${instance.name} exited (${how}): ${exits.length} exits within ${Math.round(bound.windowMs / 60_000)} min, a crash loop; not restarted again\n${whyItStopped(instance.logFile)}\n(full log: ${instance.logFile})`,
      )
      return
    }
    const delayMs = unready === 0 ? 0 : Math.min(backoff.maxMs, backoff.firstMs * 2 ** (unready - 1))
    restarts++
    const wait = delayMs > 0 ? ` in ${delayMs / 1000} s` : ''
    const note = `start:cloud: the instance exited (${how}) ${phase}; starting a new instance${wait}, as Cloud Run would (restart ${restarts})`
    options.say(`${instance.name} exited (${how}) ${phase}: starting a new instance${wait}, as Cloud Run would (restart ${restarts}; log: ${instance.logFile})`)
    if (delayMs > 0) await pause(delayMs)
    if (stopping) return
    const next = startAgain(note)
    current = next
    try {
      await waitHealthy(next, options.startTimeoutMs ?? 120_000)
    } catch (err) {
      if (stopping) return
      next.killGroup()
      const exit = await next.exited
      if (stopping) return
      // not ready: a crash like any other, with a longer wait before the next instance
      options.say(`a new instance of ${instance.name} did not get ready: ${(err as Error).message.split('\n')[0]}`)
      return replace(next, howOf(exit), 'before it was ready', unready + 1)
    }
    if (stopping) return
    options.say(`${instance.name}: new instance ready on port ${next.port} (pid ${next.child.pid})`)
    void watch(next)
  }
  const watch = async (instance: ServiceProcess): Promise<void> => {
    const exit = await instance.exited
    if (stopping) return
    instance.killGroup()
    await replace(instance, howOf(exit), 'after it was ready', 0)
  }
  void watch(first)
  return {
    name: first.name,
    port: first.port,
    current: () => current,
    restarts: () => restarts,
    async stop() {
      stopping = true
      wake?.()
      await current.stop()
    },
  }
}

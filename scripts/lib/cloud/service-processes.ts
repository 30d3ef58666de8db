/**
 * The four services as four processes, each started with the command its image runs (read from
 * the Dockerfile: `node main.mjs`, where main.mjs imports services/<SERVICE>/src/server.ts) and
 * exactly the environment it is given, nothing inherited. Each runs in its own process group
 * with its output in `<logs>/<service>.log`; stopping one signals its group by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs'
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
}

export function startServiceProcess(options: { root: string; name: string; port: number; env: Record<string, string>; logDir: string }): ServiceProcess {
  const logFile = join(options.logDir, `${options.name}.log`)
  const fd = openSync(logFile, 'w')
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

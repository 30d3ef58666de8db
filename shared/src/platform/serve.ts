import closeWithGrace from 'close-with-grace'
import { ConfigError, loadConfig, port, type PlatformConfig } from '../config/config.ts'
import { readListenHost, type PortVariable } from '../config/environment.ts'
import { createLogger, type Logger } from '../logging/logger.ts'
import type { ServiceName } from '../config/services.ts'
import type { PlatformDeps } from '../ports/deps.ts'
import { createPlatformDeps } from './deps.ts'
import { backgroundFor, isIdle, loadBackground, type Background, type Host } from './background.ts'
import { startBackgroundThread, withThreadHealth, type BackgroundThread } from './background-thread.ts'
import { createWriteGateBuffer } from '../adapters/embedded/write-gate.ts'
import type { App } from '../http/base-app.ts'
import { setTraceProject } from '../logging/trace-scope.ts'
import { stopTelemetry } from './telemetry.ts'

export type { Background }

/** What building an app may be asked besides its deps. */
export interface BuildOptions {
  /**
   * runs on the base app before any route is registered (the OpenAPI generator registers
   * @fastify/swagger there, so it sees every route the service serves)
   */
  beforeRoutes?(app: App): Promise<void>
}

/** One service as the composition root knows it: each service's `service.ts` exports one. */
export interface ServiceDefinition {
  name: ServiceName
  /** port when PORT is not set (local defaults: edge 8080, portal 8081, worker 8082, dispatcher 8083) */
  defaultPort: number
  /** the variable naming this service's port in the one-process local stack (EDGE_PORT, …) */
  localPortVariable: Exclude<PortVariable, 'PORT'>
  build(deps: PlatformDeps, options?: BuildOptions): Promise<App>
  /**
   * the URL of the module (the service's background.ts) whose export `background`
   * (StartBackground) starts what backgroundFor() planned for this service; loaded only when the
   * plan is not idle, on the thread that runs it (background.ts loadBackground)
   */
  backgroundModule?: string
}

/** Cloud Run gives 10 s between SIGTERM and SIGKILL; drain within 9. */
const SHUTDOWN_GRACE_MS = 9000

export interface RunningServices {
  config: PlatformConfig
  deps: PlatformDeps
  logger: Logger
  /** each service's app, built and ready, not yet listening when `beforeListen` runs */
  apps: ReadonlyMap<ServiceName, App>
  /** each service's port */
  ports: ReadonlyMap<ServiceName, number>
  /** the address every app listens on (LISTEN_HOST, or listenHostOf's default) */
  listenHost: string
}

export interface RunOptions {
  /**
   * `service`: one service per process, as deployed (config for that service, PORT);
   * `local-stack`: every service in this process sharing one set of deps (`npm start`: config for
   * all, one port variable each, nobody pushes so consumers pull; backgroundFor() decides)
   */
  host: Host
  env?: Record<string, string | undefined>
  /** the logger's name (the service's, or `local-stack`) */
  name?: string
  /** after every app is built and ready, before any listens (the local stack's demo tenant) */
  beforeListen?(running: RunningServices): Promise<void>
  /** once every app listens */
  afterListen?(running: RunningServices): Promise<void> | void
}

/**
 * Where a process listens when LISTEN_HOST is unset (issue 21 item 9): one service as deployed
 * listens on every interface (Cloud Run delivers to the container's address, not loopback); the
 * local stack on loopback only, so `npm start` (management API and internal routes included) is
 * not reachable from the network the machine is on. Opening it is an explicit LISTEN_HOST=0.0.0.0.
 */
export function listenHostOf(host: Host, env: Record<string, string | undefined>): string {
  return readListenHost(env, host === 'service' ? '0.0.0.0' : '127.0.0.1')
}

interface Started {
  deps: PlatformDeps | null
  apps: App[]
  background: Background[]
}

/** stop accepting and finish in-flight requests first, then the consumers, then the stores */
async function shutdown(started: Started): Promise<void> {
  await Promise.all(started.apps.map((a) => a.close()))
  for (const b of started.background.reverse()) await b.close()
  await started.deps?.close()
  // last: the spans of everything above are exported before the process exits
  await stopTelemetry()
}

/**
 * The composition root: every service process (`server.ts`), the one-process local stack
 * (`npm start`) and the deployed-shape run (`npm run start:cloud`, which starts `server.ts`) go
 * through here. Validates the configuration (a bad or missing variable stops the process with
 * exit 78 naming it), builds one set of adapters, each app, what backgroundFor() plans for each
 * service on this host (on the main thread with those adapters, or on a worker thread with
 * adapters of its own: background-thread.ts), listens (listenHostOf: loopback for the local
 * stack unless LISTEN_HOST opens it, every interface for one service), and drains on SIGTERM/SIGINT
 * within SHUTDOWN_GRACE_MS: stop accepting, finish in-flight requests, stop consumers (threads
 * included), close adapters. A start-up failure (a port in use, a failing hook, a background
 * thread that cannot start) releases what started and exits 1; so does a background thread that
 * stops on its own, after draining the rest.
 */
export async function runServices(defs: readonly ServiceDefinition[], options: RunOptions): Promise<RunningServices> {
  const env = options.env ?? process.env
  const name = options.name ?? defs.map((d) => d.name).join('+')
  let config: PlatformConfig
  const ports = new Map<ServiceName, number>()
  let listenHost: string
  try {
    // one service: its own configuration (what it needs, and nothing it does not); the local
    // stack: everything every service needs
    config = loadConfig(env, options.host === 'service' && defs.length === 1 ? defs[0]!.name : undefined)
    for (const def of defs) ports.set(def.name, port(env, options.host === 'service' ? 'PORT' : def.localPortVariable, def.defaultPort))
    listenHost = listenHostOf(options.host, env)
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${name}: ${err.message}`)
      process.exit(78) // EX_CONFIG
    }
    throw err
  }
  // log lines name the trace of the span they were written in (logging/trace-scope.ts)
  setTraceProject(config.gcpProject)
  const logger = createLogger(config.logLevel, name)
  const started: Started = { deps: null, apps: [], background: [] }
  let draining: Promise<void> | null = null
  let drainStartedAt = 0
  const drain = () => {
    drainStartedAt ||= performance.now()
    return (draining ??= shutdown(started))
  }
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an error')
    else logger.info({ signal }, 'draining')
    await drain()
  })
  // a background thread that stopped on its own: the stack would accept batches nobody applies, so
  // it drains and exits 1 (what the thread held comes back to the next start once its leases run out)
  const threadStopped = (service: ServiceName, err: Error) => {
    logger.fatal({ err, thread: service }, `${service} background thread stopped: ${name} exits`)
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref()
    void drain().finally(() => process.exit(1))
  }
  try {
    const plans = new Map(defs.map((def) => [def.name, backgroundFor(def.name, config, options.host)]))
    // with background threads, the main thread and the threads take turns at the embedded
    // database's write lock (adapters/embedded/write-gate.ts)
    const writeGate = [...plans.values()].some((p) => p.thread && !isIdle(p)) ? createWriteGateBuffer() : null
    const deps = await createPlatformDeps(config, logger, {}, writeGate ? { writeGate: { buffer: writeGate, role: 'serving' } } : {})
    started.deps = deps
    // threads first: they load their modules and open their adapters while the apps are built
    const threads = new Map<ServiceName, Promise<BackgroundThread>>()
    /** threads that run, by service (their health is the service's queue health) */
    const running = new Map<ServiceName, BackgroundThread>()
    for (const def of defs) {
      const plan = plans.get(def.name)!
      if (!plan.thread || isIdle(plan)) continue
      if (!def.backgroundModule) throw new Error(`${def.name}: background ${JSON.stringify(plan)} planned but the service has no background module`)
      const thread = startBackgroundThread(
        {
          module: def.backgroundModule,
          service: def.name,
          config: { ...config, service: def.name },
          plan,
          loggerName: name,
          tty: process.stdout.isTTY === true,
          writeGate: writeGate!,
        },
        { logger, onStopped: threadStopped },
      )
      thread.catch(() => {}) // awaited below, before anything listens
      threads.set(def.name, thread)
    }
    if (threads.size > 0) {
      // all threads drain at once, each given what is left of the grace but a second (then terminated)
      started.background.push({
        close: async () => {
          const left = Math.max(0, SHUTDOWN_GRACE_MS - 1000 - (performance.now() - drainStartedAt))
          await Promise.all([...threads.values()].map(async (t) => (await t.catch(() => null))?.close(left)))
        },
      })
    }
    const apps = new Map<ServiceName, App>()
    for (const def of defs) {
      // a service whose background runs on a thread: its /readyz covers that thread's consumers
      const app = await def.build(threads.has(def.name) ? withThreadHealth(deps, () => running.get(def.name)) : deps)
      started.apps.push(app)
      apps.set(def.name, app)
      await app.ready()
    }
    const ready: RunningServices = { config, deps, logger, apps, ports, listenHost }
    await options.beforeListen?.(ready)
    for (const def of defs) {
      const plan = plans.get(def.name)!
      if (isIdle(plan)) continue
      const thread = threads.get(def.name)
      if (thread) {
        running.set(def.name, await thread)
        continue
      }
      if (!def.backgroundModule) throw new Error(`${def.name}: background ${JSON.stringify(plan)} planned but the service has no background module`)
      started.background.push(...(await (await loadBackground(def.backgroundModule))(deps, plan)))
    }
    for (const def of defs) await apps.get(def.name)!.listen({ port: ports.get(def.name)!, host: listenHost })
    await options.afterListen?.(ready)
    return ready
  } catch (err) {
    logger.error({ err }, `${name} failed to start`)
    console.error(`${name}: ${(err as Error).message}`)
    await drain().catch(() => {})
    process.exit(1)
  }
}

/** One service process, as deployed (each service's `server.ts`). */
export async function serve(def: ServiceDefinition): Promise<void> {
  await runServices([def], { host: 'service', name: def.name })
}

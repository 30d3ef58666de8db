import { Worker } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { PlatformConfig } from '../config/config.ts'
import type { ServiceName } from '../config/services.ts'
import type { PlatformDeps } from '../ports/deps.ts'
import type { BackgroundPlan } from './background.ts'

/**
 * A service's background (its pull consumers, its task runner) on a worker thread of this
 * process, as backgroundFor() plans it for the local stack (`thread: true`). The thread
 * (background-thread-entry.ts) builds adapters of its own with createPlatformDeps from the same
 * configuration (the embedded store: a second connection to the same file, as a second process
 * on the data folder would open it; the queue's leases keep two consumers apart) and runs the
 * service's `background` there, so its CPU work never holds the main thread's event loop.
 *
 * Lifecycle: `startBackgroundThread` resolves once the background runs in the thread (rejects if
 * it failed to start); `close(timeoutMs)` asks the thread to close its consumers (in-flight
 * messages finish and are settled) and its adapters, and waits for that, terminating the thread
 * if it takes longer (what it held is then redelivered once its lease runs out).
 * A thread that stops on its own (an uncaught error, a fatal one) calls `onStopped`: the composition
 * root then drains and exits non-zero (serve.ts) rather than leave a stack that accepts batches
 * nobody applies.
 */

/** What the thread is started with. */
export interface ThreadData {
  /** URL of the module that exports the service's `background` (ServiceDefinition.backgroundModule) */
  module: string
  service: ServiceName
  /** the process's configuration, narrowed to this service (createPlatformDeps builds what it uses) */
  config: PlatformConfig
  plan: BackgroundPlan
  /** the process logger's name, so the thread's lines read as the process's */
  loggerName: string
  /** whether the process's stdout is a terminal (pretty log lines; a worker thread's stdout is none) */
  tty: boolean
  /** the embedded database's write gate shared with the main thread (adapters/embedded/write-gate.ts) */
  writeGate: SharedArrayBuffer
}

export interface ThreadHealth {
  ok: boolean
  reason?: string
}

/** thread → host */
export type ThreadMessage = { kind: 'started' } | { kind: 'failed'; message: string } | { kind: 'health'; health: ThreadHealth } | { kind: 'closed' }

/** host → thread */
export type HostMessage = { kind: 'close' }

export interface BackgroundThread {
  readonly service: ServiceName
  /** the thread's queue health, as it last reported it (its subscriptions claiming without error) */
  health(): ThreadHealth
  /** drains the thread; terminates it if that takes longer than `timeoutMs` */
  close(timeoutMs: number): Promise<void>
}

export interface BackgroundThreadOptions {
  logger: Logger
  /** the thread stopped without being asked to */
  onStopped(service: ServiceName, err: Error): void
}

export function startBackgroundThread(data: ThreadData, options: BackgroundThreadOptions): Promise<BackgroundThread> {
  const { logger } = options
  const bootStarted = performance.now()
  const worker = new Worker(new URL('./background-thread-entry.ts', import.meta.url), { workerData: data })
  let state: 'starting' | 'running' | 'closing' | 'gone' = 'starting'
  let health: ThreadHealth = { ok: true }
  let lastError: Error | null = null
  let closed: Promise<void> | null = null
  let onClosed: (() => void) | null = null

  return new Promise<BackgroundThread>((resolve, reject) => {
    const handle: BackgroundThread = {
      service: data.service,
      health: () => (state === 'gone' ? { ok: false, reason: `${data.service} background thread stopped` } : health),
      close(timeoutMs) {
        closed ??= (async () => {
          if (state === 'gone') return
          state = 'closing'
          const drained = new Promise<void>((done) => {
            onClosed = done
          })
          worker.postMessage({ kind: 'close' } satisfies HostMessage)
          let timer: NodeJS.Timeout | undefined
          const timedOut = new Promise<'timeout'>((done) => {
            timer = setTimeout(() => done('timeout'), timeoutMs)
          })
          const result = await Promise.race([drained, timedOut])
          clearTimeout(timer)
          if (result === 'timeout')
            logger.warn(
              { thread: data.service, ms: Math.round(timeoutMs) },
              'background thread did not drain in time: terminated (its messages come back when their leases run out)',
            )
          // drained: consumers and adapters are closed; nothing of the thread is needed any more
          await worker.terminate()
        })()
        return closed
      },
    }

    worker.on('message', (message: ThreadMessage) => {
      if (message.kind === 'started') {
        state = 'running'
        logger.debug({ thread: data.service, threadId: worker.threadId, ms: Math.round(performance.now() - bootStarted) }, 'background thread started')
        resolve(handle)
      } else if (message.kind === 'failed') {
        lastError = new Error(`${data.service} background thread failed to start: ${message.message}`)
        void worker.terminate()
      } else if (message.kind === 'health') {
        health = message.health
      } else if (message.kind === 'closed') {
        onClosed?.()
      }
    })
    worker.on('error', (err) => {
      lastError = err
      logger.error({ err, thread: data.service }, 'background thread failed')
    })
    worker.on('exit', (code) => {
      const was = state
      state = 'gone'
      onClosed?.()
      if (was === 'starting') reject(lastError ?? new Error(`${data.service} background thread exited (code ${code}) before it started`))
      else if (was === 'running') options.onStopped(data.service, lastError ?? new Error(`${data.service} background thread exited (code ${code})`))
    })
  })
}

/**
 * The deps the app of a service whose background runs on a thread gets: the queue's health also
 * covers that thread's subscriptions, so its /readyz says "queue" when its consumer cannot claim,
 * as when the consumer shared the main thread's adapter (and as a service process reports it).
 */
export function withThreadHealth(deps: PlatformDeps, thread: () => BackgroundThread | undefined): PlatformDeps {
  const queue = new Proxy(deps.queue, {
    get(target, property, receiver) {
      if (property !== 'health') return Reflect.get(target, property, receiver)
      return (): ThreadHealth => {
        const own = target.health?.() ?? { ok: true }
        return own.ok ? (thread()?.health() ?? own) : own
      }
    },
  })
  return { ...deps, queue }
}

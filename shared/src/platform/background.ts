import type { PlatformConfig } from '../config/config.ts'
import type { ServiceName } from '../config/services.ts'
import type { PlatformDeps } from '../ports/deps.ts'

/**
 * What a service runs besides its HTTP app, decided here and nowhere else (server.ts of each
 * service and scripts/start-local.ts ask this function).
 *
 * - A service process (`server.ts`, as deployed): with Pub/Sub, Pub/Sub pushes to the service's
 *   /pubsub/* routes (infra/pubsub.tf declares push subscriptions only), so nothing pulls: a pull
 *   consumer would ask for a subscription Terraform never creates, or double-process if someone
 *   did. It pulls only from the embedded queue, which cannot push. With Cloud Tasks, Cloud Tasks
 *   calls /tasks/deliver; the embedded scheduler instead runs its tasks in process.
 * - The single-process local stack (`npm start`): nobody pushes to it, whatever the queue (the
 *   embedded one, or the Pub/Sub emulator without push subscriptions), so it pulls. Each
 *   service's background runs there on a worker thread of its own (OFF_THREAD), so batches are
 *   decoded, merged and written off the event loop that answers the four services' requests.
 */
export interface BackgroundPlan {
  /** topics this process consumes by pulling */
  pull: Array<'contact-batches' | 'visit-events'>
  /** run the embedded task scheduler's due tasks in process */
  taskRunner: boolean
  /**
   * run the above on a worker thread with adapters of its own (platform/background-thread.ts)
   * instead of on the main thread; false in a service process, whose only work it is
   */
  thread: boolean
}

export type Host = 'service' | 'local-stack'

const CONSUMES: Record<ServiceName, BackgroundPlan['pull']> = {
  'edge-ingest': [],
  'portal-api': [],
  'upsert-worker': ['contact-batches'],
  'webhook-dispatcher': ['visit-events'],
}

/**
 * Whose background the local stack runs on a worker thread of its own. The upsert worker's
 * batches are the CPU-heavy work of the stack (a 5,000-record batch: decode, merge, ten write
 * transactions of ~75 ms each); on the main thread they made `/healthz` wait 0.7–1.1 s at p99
 * under load (docs/performance.md, "/healthz under load and after a restart"). The dispatcher's
 * work is light, but its visit consumer and task runner poll with a write transaction 15 times a
 * second; on the main thread each of those waits for the upsert thread's transaction under way
 * (measured: the main thread's median probe under load about halves with them on a thread too).
 */
const OFF_THREAD: ReadonlySet<ServiceName> = new Set(['upsert-worker', 'webhook-dispatcher'])

export function backgroundFor(service: ServiceName, config: Pick<PlatformConfig, 'queueBackend' | 'tasksBackend'>, host: Host = 'service'): BackgroundPlan {
  const pulls = host === 'local-stack' || config.queueBackend === 'embedded'
  const plan = {
    pull: pulls ? [...CONSUMES[service]] : [],
    taskRunner: service === 'webhook-dispatcher' && config.tasksBackend === 'embedded',
  }
  return { ...plan, thread: host === 'local-stack' && OFF_THREAD.has(service) && !isIdle({ ...plan, thread: false }) }
}

export function isIdle(plan: BackgroundPlan): boolean {
  return plan.pull.length === 0 && !plan.taskRunner
}

/** Something a background started (a subscription, the task runner): closed on shutdown. */
export interface Background {
  close(): Promise<void>
}

/** Starts what backgroundFor() planned for one service: its `background.ts` exports one as `background`. */
export type StartBackground = (deps: PlatformDeps, plan: BackgroundPlan) => Promise<Background[]>

/**
 * A service's `background`, from the module ServiceDefinition.backgroundModule names. Loaded when
 * needed, on whichever thread runs it: the main thread of a service process, or a worker thread
 * of the local stack (which then loads neither it on the main thread, nor the app on the thread).
 */
export async function loadBackground(moduleUrl: string): Promise<StartBackground> {
  const background = ((await import(moduleUrl)) as { background?: unknown }).background
  if (typeof background !== 'function') throw new Error(`${moduleUrl} exports no background function`)
  return background as StartBackground
}

import { createHash } from 'node:crypto'
import type { PlatformDeps } from '../../ports/deps.ts'
import type { PlatformConfig } from '../../config/config.ts'
import type { QueueRate, TaskRequest, TaskScheduler } from '../../ports/task-scheduler.ts'
import { QueueQuotaError, QueueUnavailableError } from '../../errors/queue-errors.ts'
import { tellListeners } from '../outcomes/tell.ts'

/**
 * Which task queue an endpoint's deliveries go on (issue 23; docs/capacity.md, "Past 1,000
 * endpoints"). Cloud Tasks allows 1,000 queues per project and region (a raisable quota), so:
 * - the first TASK_QUEUE_DEDICATED_LIMIT endpoints (900 by default) get a queue of their own,
 *   whose rate protects the receiver, as before;
 * - the ones after share TASK_QUEUE_POOL_SIZE pool queues (`webhook-pool-00`…, created by
 *   Terraform so they exist before any endpoint queue uses the quota up), picked by a hash of the
 *   endpoint id; the dispatcher holds each one to its own rate (pool-admission.ts);
 * - an endpoint whose own queue cannot be created (RESOURCE_EXHAUSTED: other queues in the
 *   project used the quota) goes to the pool at once; one whose new queue does not take tasks yet
 *   (a new queue can take minutes) has those tasks put on the pool meanwhile.
 * The choice is recorded on the integration (`delivery_queue`) at its first delivery, so every
 * process keeps putting its tasks on the same queue. Queues are never deleted: a deleted queue's
 * name cannot be used again for 7 days, and a pool queue's name is fixed.
 */
const POOL_QUEUE_PREFIX = 'webhook-pool-'

/**
 * A pool queue is shared by many endpoints: the dispatcher, not the queue, holds each endpoint
 * to its rate, so the queue runs at Cloud Tasks' maximum (500 a second).
 */
export const POOL_QUEUE_RATE: QueueRate = { maxDispatchesPerSecond: 500, maxConcurrentDispatches: 1000 }

/** how many endpoints got a queue of their own so far (the counters port) */
const DEDICATED_COUNT_KEY = 'task-queues:dedicated'
/** the counter never expires in practice: the queues it counts are never deleted */
const COUNT_KEPT_MS = 100 * 365 * 24 * 3_600_000

export function poolQueueName(index: number): string {
  return `${POOL_QUEUE_PREFIX}${String(index).padStart(2, '0')}`
}

/** The pool queue of an endpoint: the same for a given id and pool size, spread evenly. */
function poolQueueFor(integrationId: string, poolSize: number): string {
  const h = createHash('sha256').update(integrationId).digest().readUInt32BE(0)
  return poolQueueName(h % poolSize)
}

export function isPoolQueue(queue: string): boolean {
  return queue.startsWith(POOL_QUEUE_PREFIX)
}

export type QueuePoolDeps = Pick<PlatformDeps, 'tasks' | 'tenants' | 'counters' | 'clock' | 'logger' | 'listeners'> & {
  config: Pick<PlatformConfig, 'taskQueueDedicatedLimit' | 'taskQueuePoolSize'>
}

/** queues this process chose or ensured, per scheduler: the store and the API once per endpoint */
const chosen = new WeakMap<TaskScheduler, Map<string, string>>()
const ensuredPool = new WeakMap<TaskScheduler, Set<string>>()
const reportedLate = new WeakMap<TaskScheduler, Set<string>>()

function memo<T>(map: WeakMap<TaskScheduler, T>, tasks: TaskScheduler, init: () => T): T {
  let v = map.get(tasks)
  if (!v) map.set(tasks, (v = init()))
  return v
}

async function ensurePoolQueue(deps: Pick<PlatformDeps, 'tasks'>, queue: string): Promise<string> {
  const set = memo(ensuredPool, deps.tasks, () => new Set<string>())
  if (!set.has(queue)) {
    await deps.tasks.ensureQueue(queue, POOL_QUEUE_RATE)
    set.add(queue)
  }
  return queue
}

/**
 * The queue of an endpoint (ensured), given the name of its own queue and that queue's rate.
 * Reads the recorded choice; at the first delivery decides and records it.
 */
export async function deliveryQueueFor(deps: QueuePoolDeps, integrationId: string, ownQueue: string, rate: QueueRate): Promise<string> {
  const known = memo(chosen, deps.tasks, () => new Map<string, string>())
  const remembered = known.get(integrationId)
  if (remembered) return remembered
  const pool = () => ensurePoolQueue(deps, poolQueueFor(integrationId, deps.config.taskQueuePoolSize))
  const integration = await deps.tenants.getIntegration(integrationId)
  // an endpoint's own rate (set by an operator) is its own queue's; Cloud Tasks allows 500 at most
  const own = integration?.delivery_rate ? { ...rate, maxDispatchesPerSecond: Math.min(500, integration.delivery_rate) } : rate
  let queue: string
  if (!integration) {
    // no endpoint (deleted): its remaining tasks only record "not active"; no new queue for that
    queue = await pool()
  } else if (integration.delivery_queue && isPoolQueue(integration.delivery_queue)) {
    queue = await ensurePoolQueue(deps, integration.delivery_queue)
  } else if (integration.delivery_queue) {
    queue = await ownOrPool(deps, integration.delivery_queue, own, pool)
  } else {
    // first delivery of this endpoint: a queue of its own while the count allows it
    await deps.counters.apply([{ key: DEDICATED_COUNT_KEY, add: 1 }], deps.clock.now() + COUNT_KEPT_MS)
    const [count = 0] = await deps.counters.read([DEDICATED_COUNT_KEY], deps.clock.now())
    queue = count <= deps.config.taskQueueDedicatedLimit ? await ownOrPool(deps, ownQueue, own, pool) : await pool()
    // two processes deciding at once both write; the later one stays, and tasks already on the
    // other queue still run (only the rate of that endpoint is briefly shared)
    await deps.tenants.updateIntegration(integrationId, { delivery_queue: queue })
    deps.logger.info({ event: 'delivery_queue_chosen', integrationId, queue, pooled: isPoolQueue(queue), dedicatedCount: count }, 'delivery queue chosen')
  }
  known.set(integrationId, queue)
  return queue
}

/** The endpoint's own queue, or its pool queue when the queue quota has no room for it. */
async function ownOrPool(deps: QueuePoolDeps, own: string, rate: QueueRate, pool: () => Promise<string>): Promise<string> {
  try {
    await deps.tasks.ensureQueue(own, rate)
    return own
  } catch (err) {
    if (!(err instanceof QueueQuotaError)) throw err
    deps.logger.warn({ event: 'queue_quota_exhausted', queue: own }, 'no Cloud Tasks queue quota left: the endpoint shares a pool queue')
    return pool()
  }
}

/**
 * Enqueues on the endpoint's queue; when that queue does not take tasks yet (a new Cloud Tasks
 * queue can take minutes), on its pool queue at once, so nothing waits for the queue. Told once
 * per queue and process to the queue-fallback listeners (the operational event
 * `queue.created_late`: domain/operations/queue-late.ts).
 */
export async function enqueueOnDeliveryQueue(deps: QueuePoolDeps, integrationId: string, task: TaskRequest): Promise<void> {
  try {
    await deps.tasks.enqueue(task)
  } catch (err) {
    if (!(err instanceof QueueUnavailableError) || isPoolQueue(task.queue)) throw err
    const pool = await ensurePoolQueue(deps, poolQueueFor(integrationId, deps.config.taskQueuePoolSize))
    await deps.tasks.enqueue({ ...task, queue: pool })
    const late = memo(reportedLate, deps.tasks, () => new Set<string>())
    if (late.has(task.queue)) return
    // marked before telling: the event's own delivery may find its queue late too, and is then
    // reported once, not again and again
    late.add(task.queue)
    const outcome = { queue: task.queue, integrationId, poolQueue: pool, at: new Date(deps.clock.now()).toISOString() }
    await tellListeners(deps.listeners.queueFallback, deps, (l) => l.onDeliveryQueueFellBack(outcome, deps))
  }
}

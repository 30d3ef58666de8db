import { createHash } from 'node:crypto'
import type { QueueRate, TaskRequest, TaskScheduler } from '../../ports/task-scheduler.ts'
import { QueueQuotaError, QueueUnavailableError } from '../../errors/queue-errors.ts'
import { withTraceparent } from '../../logging/trace-propagation.ts'
import { ALREADY_EXISTS, codeOf, NOT_FOUND } from './grpc-codes.ts'

/** CreateQueue past the project's queue quota (1,000 per region by default) */
const RESOURCE_EXHAUSTED = 8
/** CreateTask on a queue that is not running (paused, disabled): handled like a missing one */
const FAILED_PRECONDITION = 9

/** The part of `CloudTasksClient` (@google-cloud/tasks) this adapter calls; tests pass a fake. */
export interface CloudTasksApi {
  createTask(request: CreateTaskRequest): Promise<unknown>
  createQueue(request: CreateQueueRequest): Promise<unknown>
  updateQueue(request: UpdateQueueRequest): Promise<unknown>
}

export interface CloudTasksQueueBody {
  name: string
  rateLimits: { maxDispatchesPerSecond: number; maxConcurrentDispatches: number }
  retryConfig?: {
    maxAttempts: number
    minBackoff: { seconds: number }
    maxBackoff: { seconds: number }
    maxDoublings: number
    maxRetryDuration: { seconds: number }
  }
}
export interface CreateQueueRequest {
  parent: string
  queue: CloudTasksQueueBody
}
export interface UpdateQueueRequest {
  queue: CloudTasksQueueBody
  updateMask: { paths: string[] }
}
export interface CreateTaskRequest {
  parent: string
  task: {
    name: string
    scheduleTime?: { seconds: number; nanos: number }
    httpRequest: {
      url: string
      httpMethod: 'POST'
      headers: Record<string, string>
      body: Buffer
      oidcToken: { serviceAccountEmail: string; audience: string }
    }
  }
}

export interface CloudTasksSchedulerOptions {
  project: string
  location: string
  /** the dispatcher's task endpoint Cloud Tasks calls */
  targetUrl: string
  /** identity of the OIDC token Cloud Tasks attaches */
  serviceAccountEmail: string
  /** `aud` of that token, checked by the endpoint */
  audience: string
}

/**
 * How long Cloud Tasks keeps retrying one delivery task. A receiver's failure never reaches this:
 * the dispatcher records it, schedules the next attempt as a new task and answers 200
 * (domain/webhooks/deliver.ts). Cloud Tasks retries a task only when the *dispatcher* did not
 * take it: unreachable (crash, cold start, bad deploy), a 429/503 from Cloud Run, a 5xx because
 * its store failed, or no answer within the dispatch deadline (10 min). Cloud Tasks deletes a
 * task once both limits are reached (RetryConfig: "stops retrying only when max_attempts and
 * max_retry_duration are both satisfied"), so the queue must outlast any dispatcher outage we
 * plan for:
 * - retries 1 s, 2 s, 4 s … 256 s apart (maxDoublings 8, 8.5 min in all), then every 5 min
 *   (maxBackoff): a short outage costs seconds, a long one at most 5 min after it ends;
 * - a task is dropped only after 24 h (maxRetryDuration) and 100 attempts (reached after ~8 h,
 *   so the 24 h decide): an outage up to a day loses nothing. Past that, the stranded-delivery
 *   sweep (domain/webhooks/sweep.ts) enqueues the task again.
 * Existing queues get this config too: ensureQueue patches it with the rate (below).
 */
export const QUEUE_RETRY_CONFIG = {
  maxAttempts: 100,
  minBackoff: { seconds: 1 },
  maxBackoff: { seconds: 300 },
  maxDoublings: 8,
  maxRetryDuration: { seconds: 24 * 3600 },
}

/** the queue fields ensureQueue sets on an existing queue: its rate and the retry config above */
const UPDATE_MASK = [
  'rate_limits.max_dispatches_per_second',
  'rate_limits.max_concurrent_dispatches',
  'retry_config.max_attempts',
  'retry_config.min_backoff',
  'retry_config.max_backoff',
  'retry_config.max_doublings',
  'retry_config.max_retry_duration',
]

/**
 * A Cloud Tasks queue id for a queue key: ids allow only [A-Za-z0-9-] and 100 characters, so a
 * key that does not fit is cleaned and suffixed with a hash of the original (stays unique).
 */
export function cloudTasksQueueId(queue: string): string {
  if (/^[A-Za-z0-9-]{1,100}$/.test(queue)) return queue
  const cleaned = queue
    .replace(/[^A-Za-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
  const hash = createHash('sha256').update(queue).digest('hex').slice(0, 16)
  return cleaned ? `${cleaned}-${hash}` : `q-${hash}`
}

/** A task id for a dedupe name: a base64url SHA-256, so any name maps to [A-Za-z0-9_-]{43}. */
export function cloudTasksTaskId(name: string): string {
  return createHash('sha256').update(name).digest('base64url')
}

/**
 * Tasks on Google Cloud Tasks. Cloud Tasks pushes each task to `targetUrl` with an OIDC token and
 * enforces the queue's rate; named tasks make enqueue idempotent (ALREADY_EXISTS means "already
 * queued"). No emulator exists: with CLOUD_TASKS_EMULATOR_HOST the real client speaks REST over
 * HTTP to a local stand-in (adapters/google/stand-in-client.ts); test/deploy/google-rest-adapters.test.ts
 * checks the exact requests that way, test/conformance/task-scheduler.test.ts against a fake client.
 */
export function createCloudTasksScheduler(client: CloudTasksApi, options: CloudTasksSchedulerOptions): TaskScheduler {
  const locationPath = `projects/${options.project}/locations/${options.location}`
  const queuePath = (queue: string) => `${locationPath}/queues/${cloudTasksQueueId(queue)}`
  /** rate last applied per queue in this process (with the retry config), so a hot path does not call the API again */
  const applied = new Map<string, string>()

  return {
    async ensureQueue(queue, rate: QueueRate) {
      const key = `${rate.maxDispatchesPerSecond}/${rate.maxConcurrentDispatches}`
      if (applied.get(queue) === key) return
      const rateLimits = {
        maxDispatchesPerSecond: rate.maxDispatchesPerSecond,
        maxConcurrentDispatches: rate.maxConcurrentDispatches,
      }
      try {
        await client.createQueue({
          parent: locationPath,
          queue: { name: queuePath(queue), rateLimits, retryConfig: QUEUE_RETRY_CONFIG },
        })
      } catch (err) {
        if (codeOf(err) === RESOURCE_EXHAUSTED) throw new QueueQuotaError(queue)
        if (codeOf(err) !== ALREADY_EXISTS) throw err
        // a queue created by an older version keeps its old retry config unless it is patched
        await client.updateQueue({
          queue: { name: queuePath(queue), rateLimits, retryConfig: QUEUE_RETRY_CONFIG },
          updateMask: { paths: UPDATE_MASK },
        })
      }
      applied.set(queue, key)
    },

    async enqueue(task: TaskRequest) {
      const parent = queuePath(task.queue)
      const request: CreateTaskRequest = {
        parent,
        task: {
          name: `${parent}/tasks/${cloudTasksTaskId(task.name)}`,
          httpRequest: {
            url: options.targetUrl,
            httpMethod: 'POST',
            // the enqueuer's trace: /tasks/deliver continues it (platform/telemetry-propagator.ts)
            headers: withTraceparent({ 'Content-Type': 'application/json', 'X-Delivery-Queue': task.queue }),
            body: task.payload,
            oidcToken: { serviceAccountEmail: options.serviceAccountEmail, audience: options.audience },
          },
        },
      }
      if (task.scheduleAt) {
        const ms = task.scheduleAt.getTime()
        const seconds = Math.floor(ms / 1000)
        request.task.scheduleTime = { seconds, nanos: (ms - seconds * 1000) * 1_000_000 }
      }
      try {
        await client.createTask(request)
      } catch (err) {
        // a new queue can take minutes to accept tasks; a deleted one never will again
        if (codeOf(err) === NOT_FOUND || codeOf(err) === FAILED_PRECONDITION) throw new QueueUnavailableError(task.queue)
        if (codeOf(err) !== ALREADY_EXISTS) throw err
      }
    },

    async start() {
      // push-style: Cloud Tasks calls the dispatcher's endpoint
      return { close: async () => {} }
    },

    async close() {},
  }
}

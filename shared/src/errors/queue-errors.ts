/** The failures the task scheduler port names (ports/task-scheduler.ts), one class each. */

/**
 * ensureQueue could not create a new queue: the project's queue quota is spent (Cloud Tasks:
 * RESOURCE_EXHAUSTED, 1,000 queues per region by default). Existing queues keep working; the
 * caller puts the work on a queue that exists (domain/webhooks/queue-pool.ts).
 */
export class QueueQuotaError extends Error {
  readonly queue: string
  constructor(queue: string) {
    super(`no queue quota left for ${queue}`)
    this.queue = queue
    this.name = 'QueueQuotaError'
  }
}

/**
 * enqueue found no such queue: a queue just created can take minutes to accept tasks in Cloud
 * Tasks (NOT_FOUND meanwhile), or the queue was deleted. Nothing was enqueued.
 */
export class QueueUnavailableError extends Error {
  readonly queue: string
  constructor(queue: string) {
    super(`queue ${queue} is not available`)
    this.queue = queue
    this.name = 'QueueUnavailableError'
  }
}

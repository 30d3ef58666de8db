export interface QueueRate {
  maxDispatchesPerSecond: number
  maxConcurrentDispatches: number
}

export interface TaskRequest {
  /** the per-endpoint queue (one per integration), created with ensureQueue */
  queue: string
  /** dedupe name: a second enqueue with the same name is ignored */
  name: string
  /** the job, JSON bytes; delivered unchanged to the handler */
  payload: Buffer
  /** not before this instant */
  scheduleAt?: Date
}

export interface TaskMeta {
  queue: string
  name: string
  /** 1 on the first dispatch of this task */
  dispatchCount: number
}

/** Runs one task; a throw means "retry this task later" (the adapter's own retry). */
export type TaskHandler = (payload: Buffer, meta: TaskMeta) => Promise<void>

/**
 * Schedules HTTP-style tasks with a per-queue rate. In production Cloud Tasks calls the
 * webhook-dispatcher's task endpoint with an OIDC token; locally the embedded scheduler calls
 * the handler in process.
 */
export interface TaskScheduler {
  /** creates the queue or sets its rate; a new queue past the quota: QueueQuotaError (errors/queue-errors.ts) */
  ensureQueue(queue: string, rate: QueueRate): Promise<void>
  /** a queue that does not exist (yet): QueueUnavailableError */
  enqueue(task: TaskRequest): Promise<void>
  /** pull-style adapters (embedded) run tasks through this handler; push-style ones resolve a no-op */
  start(handler: TaskHandler): Promise<{ close(): Promise<void> }>
  close(): Promise<void>
}

import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import type { EmbeddedDb } from './db.ts'
import type { TaskHandler, TaskScheduler } from '../../ports/task-scheduler.ts'
import { activeTraceparent } from '../../logging/trace-propagation.ts'
import { taskRows } from './task-rows.ts'
import { taskDispatcher } from './task-dispatch.ts'

export interface EmbeddedTaskSchedulerOptions {
  clock: Clock
  logger: Logger
  /** how often start() looks for due tasks (default 100 ms, real time) */
  pollIntervalMs?: number
  /** first retry delay after a throwing handler; doubles per dispatch up to 5 min (default 1 s) */
  retryBackoffMs?: number
  /** queues the file may hold, as Cloud Tasks' per-region quota (default: no limit; small in tests) */
  maxQueues?: number
}

export interface EmbeddedTaskScheduler extends TaskScheduler {
  /**
   * Dispatches the tasks due now (by the injected clock) that the queues' rates allow, waits for
   * them and returns how many ran. Uses `handler`, or the one given to start(). For tests.
   */
  runDue(handler?: TaskHandler): Promise<number>
}

/**
 * Cloud Tasks on the embedded SQLite file. A task is a row keyed by (queue, name), so a second
 * enqueue of a name is ignored, also after the task ran (the row stays as a tombstone for a day:
 * task-rows.ts). Each queue dispatches at most maxDispatchesPerSecond (token bucket, burst = the
 * rate) and at most maxConcurrentDispatches at a time, measured by the injected clock
 * (task-budget.ts, task-dispatch.ts). A throwing handler gets the task back later with exponential backoff. The rate
 * is enforced per process. A dispatch leases its task and records the process that holds it: when
 * that process is gone (a crash, a SIGKILL), the task is due again as soon as a scheduler on the
 * file sees it.
 */
export function createEmbeddedTaskScheduler(edb: EmbeddedDb, options: EmbeddedTaskSchedulerOptions): EmbeddedTaskScheduler {
  const { clock, logger } = options
  const pollIntervalMs = options.pollIntervalMs ?? 100
  const rows = taskRows(edb, logger)
  // a restart after a crash: the deliveries the dead process had in flight are due now
  edb.transaction(() => rows.reapDeadOwners())

  let startedHandler: TaskHandler | null = null
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const { tick, tickLogged, scheduleTick, drain } = taskDispatcher(rows, {
    clock,
    logger,
    retryBackoffMs: options.retryBackoffMs ?? 1000,
    active: (handler) => startedHandler === handler && !closed,
  })

  return {
    async ensureQueue(queue, rate) {
      if (!(rate.maxDispatchesPerSecond > 0) || !(rate.maxConcurrentDispatches >= 1)) throw new Error(`invalid rate for queue ${queue}`)
      rows.ensureQueue(queue, rate, options.maxQueues)
    },

    async enqueue(task) {
      if (closed) throw new Error('task scheduler closed')
      rows.insert(task, task.scheduleAt?.getTime() ?? clock.now(), activeTraceparent())
      // a started scheduler runs a task due now without waiting for its next poll
      const handler = startedHandler
      if (handler && !closed) scheduleTick(handler)
    },

    async start(handler) {
      if (closed) throw new Error('task scheduler closed')
      if (startedHandler) throw new Error('task scheduler already started')
      startedHandler = handler
      const loop = () => {
        if (closed || !startedHandler) return
        tickLogged(handler)
        timer = setTimeout(loop, pollIntervalMs)
      }
      loop()
      return {
        // stops dispatching; the scheduler itself stays usable (enqueue, runDue, start again)
        async close() {
          if (startedHandler !== handler) return
          startedHandler = null
          if (timer) clearTimeout(timer)
          await drain()
        },
      }
    },

    async runDue(handler) {
      const h = handler ?? startedHandler
      if (!h) throw new Error('runDue needs a handler (or start() first)')
      const started = tick(h)
      await Promise.allSettled(started)
      rows.flushFinished()
      return started.length
    },

    async close() {
      closed = true
      startedHandler = null
      if (timer) clearTimeout(timer)
      await drain()
    },
  }
}

import { AsyncResource } from 'node:async_hooks'
import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import type { TaskHandler } from '../../ports/task-scheduler.ts'
import { inTaskSpan } from '../../logging/trace-propagation.ts'
import { DispatchBudget } from './task-budget.ts'
import type { TaskRow, TaskRows } from './task-rows.ts'

const MAX_RETRY_BACKOFF_MS = 5 * 60_000

interface TaskDispatcherOptions {
  clock: Clock
  logger: Logger
  /** first retry delay after a throwing handler; doubles per dispatch up to 5 min */
  retryBackoffMs: number
  /** whether `handler` is still the one the scheduler was started with (and it is open): only then do finished dispatches look for more work */
  active(handler: TaskHandler): boolean
}

/**
 * The embedded task scheduler's dispatching: each tick claims the due tasks the queues' rates
 * allow (task-rows.ts, task-budget.ts) and runs them; a throwing handler gets its task back after a
 * backoff. A finished dispatch or a new task asks for one more tick, coalesced per turn of the
 * event loop.
 */
export function taskDispatcher(rows: TaskRows, options: TaskDispatcherOptions) {
  const { clock, logger, active } = options
  const budget = new DispatchBudget()
  const inFlight = new Set<Promise<void>>()

  /** runs one task; a throwing handler gets it back after a backoff */
  const dispatch = (row: TaskRow, handler: TaskHandler): Promise<void> =>
    budget.running(row.queue, async () => {
      try {
        const meta = { queue: row.queue, name: row.name, dispatchCount: row.dispatch_count }
        await inTaskSpan(row.queue, row.traceparent, () => handler(Buffer.from(row.payload), meta))
        rows.finished(row, clock.now())
      } catch (err) {
        const delay = Math.min(options.retryBackoffMs * 2 ** (row.dispatch_count - 1), MAX_RETRY_BACKOFF_MS)
        logger.warn({ err, queue: row.queue, task: row.name, dispatchCount: row.dispatch_count }, 'task failed; retrying later')
        try {
          rows.retry(row, clock.now() + delay)
        } catch (dbErr) {
          logger.error({ err: dbErr, queue: row.queue, task: row.name }, 'rescheduling task failed; it is rescheduled with the next poll')
        }
      }
    })

  /** Claims and starts the due tasks the rates allow; returns their promises. */
  function tick(handler: TaskHandler): Array<Promise<void>> {
    const now = clock.now()
    rows.purgeTombstones(now)
    return rows.claim(now, budget).map((row) => {
      const p: Promise<void> = dispatch(row, handler).finally(() => {
        inFlight.delete(p)
        // a finished dispatch frees a concurrency slot: look for more work now, not at the next poll
        if (active(handler)) scheduleTick(handler)
      })
      inFlight.add(p)
      return p
    })
  }
  /** a tick whose failure is logged, not thrown: the next poll tries again */
  function tickLogged(handler: TaskHandler): void {
    try {
      tick(handler)
    } catch (err) {
      logger.warn({ err }, 'task poll failed')
    }
  }

  /** the context the scheduler was built in (start-up: no request's), for the timers any request may arm */
  const detached = new AsyncResource('embedded-task-scheduler')
  let tickScheduled = false
  /** one coalesced tick per turn of the event loop, however many tasks finish or arrive in it */
  function scheduleTick(handler: TaskHandler): void {
    if (tickScheduled) return
    tickScheduled = true
    // the check phase after this turn's I/O: one lease transaction claims the slots every
    // dispatch finished in the turn freed. A 1 ms timer merged a few more turns but left the loop
    // idle 6-9 % of a busy run, 58-62 % of the bare loop against 64-73 % on setImmediate
    // (docs/performance.md, "Tenth pass"). It runs outside the context of whoever woke it (an
    // enqueuing request): each task runs in its own stored trace
    detached.runInAsyncScope(setImmediate, null, () => {
      tickScheduled = false
      if (active(handler)) tickLogged(handler)
    })
  }

  return {
    tick,
    tickLogged,
    scheduleTick,
    /** waits for the dispatches under way, then marks the finished ones done */
    async drain(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
      rows.flushFinished()
    },
  }
}

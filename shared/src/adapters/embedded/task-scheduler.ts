import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import type { EmbeddedDb } from './db.ts'
import { leaseOwnersOf, REAP_EVERY_MS } from './lease-owners.ts'
import type { QueueRate, TaskHandler, TaskScheduler } from '../../ports/task-scheduler.ts'
import { QueueQuotaError } from '../../errors/queue-errors.ts'
import { AsyncResource } from 'node:async_hooks'
import { activeTraceparent, inTaskSpan } from '../../logging/trace-propagation.ts'

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

const DEFAULT_RATE: QueueRate = { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 }
const MAX_RETRY_BACKOFF_MS = 5 * 60_000
/**
 * a dispatch that has not finished after this long is dispatched again; a process that died is
 * noticed at once (lease-owners.ts) and its tasks run again without waiting for this
 */
const LEASE_MS = 10 * 60_000
/** finished tasks are kept this long so a late enqueue of the same name stays deduplicated */
const TOMBSTONE_MS = 24 * 60 * 60_000

interface TaskRow {
  queue: string
  name: string
  payload: Uint8Array
  dispatch_count: number
  /** the enqueuer's trace (W3C), as Cloud Tasks carries it in the task's headers; null without one */
  traceparent: string | null
}

interface Bucket {
  tokens: number
  at: number
}

/**
 * Cloud Tasks on the embedded SQLite file. A task is a row keyed by (queue, name), so a second
 * enqueue of a name is ignored, also after the task ran (the row stays as a tombstone for a day).
 * Each queue dispatches at most maxDispatchesPerSecond (token bucket, burst = the rate) and at most
 * maxConcurrentDispatches at a time, measured by the injected clock. A throwing handler gets the
 * task back later with exponential backoff. The rate is enforced per process. A dispatch leases
 * its task for LEASE_MS and records the process that holds it (`lease_owner`): when that process
 * is gone (a crash, a SIGKILL), the task is due again as soon as a scheduler on the file sees it.
 */
export function createEmbeddedTaskScheduler(edb: EmbeddedDb, options: EmbeddedTaskSchedulerOptions): EmbeddedTaskScheduler {
  const { clock, logger } = options
  const pollIntervalMs = options.pollIntervalMs ?? 100
  const retryBackoffMs = options.retryBackoffMs ?? 1000
  const { db } = edb

  db.exec(`
    CREATE TABLE IF NOT EXISTS task_queues (
      queue TEXT PRIMARY KEY,
      max_dispatches_per_second REAL NOT NULL,
      max_concurrent_dispatches INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS task_tasks (
      queue TEXT NOT NULL,
      name TEXT NOT NULL,
      payload BLOB NOT NULL,
      run_at INTEGER NOT NULL,
      dispatch_count INTEGER NOT NULL DEFAULT 0,
      lease_until INTEGER,
      lease_owner TEXT,
      done_at INTEGER,
      traceparent TEXT,
      PRIMARY KEY (queue, name)
    );
    -- pending tasks only: finished ones stay a day as tombstones (names are not reused) and must
    -- not slow every poll down
    DROP INDEX IF EXISTS task_tasks_due;
    CREATE INDEX IF NOT EXISTS task_tasks_pending ON task_tasks (queue, run_at) WHERE done_at IS NULL;
    CREATE INDEX IF NOT EXISTS task_tasks_done ON task_tasks (done_at) WHERE done_at IS NOT NULL;
  `)
  const columns = (db.prepare('PRAGMA table_info(task_tasks)').all() as Array<{ name: string }>).map((c) => c.name)
  // columns an older file lacks (a fresh one has them from CREATE TABLE); another process opening
  // the same old file may add one between our read and our ALTER: its column is ours too
  for (const column of ['lease_owner', 'traceparent']) {
    if (columns.includes(column)) continue
    try {
      db.exec(`ALTER TABLE task_tasks ADD COLUMN ${column} TEXT`)
    } catch (err) {
      if (!/duplicate column name/.test(String((err as Error).message))) throw err
    }
  }
  db.exec('CREATE INDEX IF NOT EXISTS task_tasks_leased ON task_tasks (lease_owner) WHERE lease_owner IS NOT NULL')
  const upsertQueue = db.prepare(`
    INSERT INTO task_queues (queue, max_dispatches_per_second, max_concurrent_dispatches) VALUES (?, ?, ?)
    ON CONFLICT (queue) DO UPDATE SET max_dispatches_per_second = excluded.max_dispatches_per_second,
      max_concurrent_dispatches = excluded.max_concurrent_dispatches`)
  const selectQueues = db.prepare('SELECT queue, max_dispatches_per_second, max_concurrent_dispatches FROM task_queues')
  const queueExists = db.prepare('SELECT 1 FROM task_queues WHERE queue = ?')
  const countQueues = db.prepare('SELECT COUNT(*) AS n FROM task_queues')
  const insertTask = db.prepare('INSERT OR IGNORE INTO task_tasks (queue, name, payload, run_at, traceparent) VALUES (?, ?, ?, ?, ?)')
  // the queues with a due task: a loose index scan (one index seek per queue with pending
  // tasks), then one EXISTS probe each — not a scan of every pending task on every poll
  const selectDueQueues = db.prepare(`
    WITH RECURSIVE q(queue) AS (
      SELECT (SELECT MIN(queue) FROM task_tasks WHERE done_at IS NULL)
      UNION ALL
      SELECT (SELECT MIN(queue) FROM task_tasks WHERE done_at IS NULL AND queue > q.queue) FROM q WHERE q.queue IS NOT NULL
    )
    SELECT queue FROM q WHERE queue IS NOT NULL AND EXISTS (
      SELECT 1 FROM task_tasks t
      WHERE t.queue = q.queue AND t.done_at IS NULL AND t.run_at <= ? AND (t.lease_until IS NULL OR t.lease_until <= ?))`)
  const selectDue = db.prepare(`
    SELECT queue, name, payload, dispatch_count, traceparent FROM task_tasks
    WHERE queue = ? AND done_at IS NULL AND run_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
    ORDER BY run_at, rowid LIMIT ?`)
  const leaseTask = db.prepare('UPDATE task_tasks SET dispatch_count = dispatch_count + 1, lease_until = ?, lease_owner = ? WHERE queue = ? AND name = ?')
  const finishTask = db.prepare("UPDATE task_tasks SET done_at = ?, lease_until = NULL, lease_owner = NULL, payload = x'' WHERE queue = ? AND name = ?")
  const retryTask = db.prepare('UPDATE task_tasks SET run_at = ?, lease_until = NULL, lease_owner = NULL WHERE queue = ? AND name = ?')
  const releaseOwner = db.prepare('UPDATE task_tasks SET lease_until = NULL, lease_owner = NULL WHERE lease_owner = ? AND done_at IS NULL')
  const purgeTombstones = db.prepare('DELETE FROM task_tasks WHERE done_at IS NOT NULL AND done_at < ?')

  const buckets = new Map<string, Bucket>()
  const running = new Map<string, number>()
  const inFlight = new Set<Promise<void>>()
  let startedHandler: TaskHandler | null = null
  let timer: NodeJS.Timeout | null = null
  let closed = false
  let lastPurge = 0

  const owners = leaseOwnersOf(edb)
  const reaper = {} // this scheduler, as lease-owners.ts tells dead owners apart per adapter
  let lastReap = 0
  /** Makes the tasks of owners that died since this scheduler last looked due again; inside a transaction. */
  function reapDeadOwners(): void {
    lastReap = Date.now()
    for (const owner of owners.deadOwners(reaper)) {
      const { changes } = releaseOwner.run(owner)
      if (Number(changes) > 0) logger.warn({ owner, tasks: Number(changes) }, 'tasks leased by a process that is gone dispatched again at once')
    }
  }
  // a restart after a crash: the deliveries the dead process had in flight are due now
  edb.transaction(reapDeadOwners)

  function ratesByQueue(): Map<string, QueueRate> {
    const rows = selectQueues.all() as Array<{ queue: string; max_dispatches_per_second: number; max_concurrent_dispatches: number }>
    return new Map(rows.map((r) => [r.queue, { maxDispatchesPerSecond: r.max_dispatches_per_second, maxConcurrentDispatches: r.max_concurrent_dispatches }]))
  }

  /** whole dispatches the queue's bucket allows now; refilled by elapsed clock time */
  function tokensOf(queue: string, rate: QueueRate, now: number): Bucket {
    const burst = Math.max(1, rate.maxDispatchesPerSecond)
    let bucket = buckets.get(queue)
    if (!bucket) {
      bucket = { tokens: burst, at: now }
      buckets.set(queue, bucket)
    }
    const elapsed = Math.max(0, now - bucket.at)
    bucket.tokens = Math.min(burst, bucket.tokens + (elapsed / 1000) * rate.maxDispatchesPerSecond)
    bucket.at = now
    return bucket
  }

  async function dispatch(row: TaskRow, handler: TaskHandler): Promise<void> {
    running.set(row.queue, (running.get(row.queue) ?? 0) + 1)
    try {
      const meta = { queue: row.queue, name: row.name, dispatchCount: row.dispatch_count }
      await inTaskSpan(row.queue, row.traceparent, () => handler(Buffer.from(row.payload), meta))
      // marked done with the next poll's transaction (one commit for many tasks, not one each);
      // until then its lease keeps it from running again, and a crash in between only lets it
      // run once more after the lease — the at-least-once every task handler already allows for
      finished.push({ queue: row.queue, name: row.name, at: clock.now() })
    } catch (err) {
      const delay = Math.min(retryBackoffMs * 2 ** (row.dispatch_count - 1), MAX_RETRY_BACKOFF_MS)
      logger.warn({ err, queue: row.queue, task: row.name, dispatchCount: row.dispatch_count }, 'task failed; retrying later')
      try {
        retryTask.run(clock.now() + delay, row.queue, row.name)
      } catch (dbErr) {
        logger.error({ err: dbErr, queue: row.queue, task: row.name }, 'rescheduling task failed; its lease will expire')
      }
    } finally {
      running.set(row.queue, (running.get(row.queue) ?? 1) - 1)
    }
  }

  const finished: Array<{ queue: string; name: string; at: number }> = []
  /**
   * Runs fn in one transaction that first marks the finished tasks done. If the transaction
   * fails they stay queued for the next one (their leases still keep them from running).
   */
  function withFinished<T>(fn: () => T): T {
    const batch = finished.splice(0)
    try {
      return edb.transaction(() => {
        for (const f of batch) finishTask.run(f.at, f.queue, f.name)
        return fn()
      })
    } catch (err) {
      finished.unshift(...batch)
      throw err
    }
  }
  const flushFinished = () => {
    if (finished.length > 0) withFinished(() => undefined)
  }

  /** Claims and starts the due tasks the rates allow; returns their promises. */
  function tick(handler: TaskHandler): Array<Promise<void>> {
    const now = clock.now()
    if (now - lastPurge > 60 * 60_000) {
      lastPurge = now
      purgeTombstones.run(now - TOMBSTONE_MS)
    }
    const rates = ratesByQueue()
    const claimed = withFinished(() => {
      const rows: TaskRow[] = []
      if (Date.now() - lastReap >= REAP_EVERY_MS) reapDeadOwners()
      const dueQueues = selectDueQueues.all(now, now) as Array<{ queue: string }>
      for (const { queue } of dueQueues) {
        const rate = rates.get(queue) ?? DEFAULT_RATE
        const bucket = tokensOf(queue, rate, now)
        const free = Math.min(Math.floor(bucket.tokens), rate.maxConcurrentDispatches - (running.get(queue) ?? 0))
        if (free <= 0) continue
        const due = selectDue.all(queue, now, now, free) as unknown as TaskRow[]
        for (const row of due) {
          leaseTask.run(now + LEASE_MS, owners.self, row.queue, row.name)
          rows.push({ ...row, dispatch_count: row.dispatch_count + 1 })
        }
        bucket.tokens -= due.length
      }
      return rows
    })
    return claimed.map((row) => {
      const p: Promise<void> = dispatch(row, handler).finally(() => {
        inFlight.delete(p)
        // a finished dispatch frees a concurrency slot: look for more work now, not at the next poll
        if (startedHandler === handler && !closed) scheduleTick(handler)
      })
      inFlight.add(p)
      return p
    })
  }

  /** the context the scheduler was built in (start-up: no request's), for the timers any request may arm */
  const detached = new AsyncResource('embedded-task-scheduler')
  let tickScheduled = false
  /** one coalesced tick per turn of the event loop, however many tasks finish or arrive in it */
  function scheduleTick(handler: TaskHandler): void {
    if (tickScheduled) return
    tickScheduled = true
    // a millisecond of coalescing lets one lease transaction claim the slots several finished
    // dispatches freed, instead of one transaction per task. The timer runs outside the context
    // of whoever woke it (an enqueuing request): each task runs in its own stored trace
    detached.runInAsyncScope(
      setTimeout,
      null,
      () => {
        tickScheduled = false
        if (startedHandler !== handler || closed) return
        try {
          tick(handler)
        } catch (err) {
          logger.warn({ err }, 'task poll failed')
        }
      },
      1,
    )
  }

  const scheduler: EmbeddedTaskScheduler = {
    async ensureQueue(queue, rate) {
      if (!(rate.maxDispatchesPerSecond > 0) || !(rate.maxConcurrentDispatches >= 1)) throw new Error(`invalid rate for queue ${queue}`)
      const maxQueues = options.maxQueues
      edb.transaction(() => {
        if (maxQueues !== undefined && !queueExists.get(queue) && Number((countQueues.get() as { n: number }).n) >= maxQueues) throw new QueueQuotaError(queue)
        upsertQueue.run(queue, rate.maxDispatchesPerSecond, Math.floor(rate.maxConcurrentDispatches))
      })
    },

    async enqueue(task) {
      if (closed) throw new Error('task scheduler closed')
      insertTask.run(task.queue, task.name, task.payload, task.scheduleAt?.getTime() ?? clock.now(), activeTraceparent())
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
        try {
          tick(handler)
        } catch (err) {
          logger.warn({ err }, 'task poll failed')
        }
        timer = setTimeout(loop, pollIntervalMs)
      }
      loop()
      return {
        // stops dispatching; the scheduler itself stays usable (enqueue, runDue, start again)
        async close() {
          if (startedHandler !== handler) return
          startedHandler = null
          if (timer) clearTimeout(timer)
          while (inFlight.size > 0) await Promise.allSettled([...inFlight])
          flushFinished()
        },
      }
    },

    async runDue(handler) {
      const h = handler ?? startedHandler
      if (!h) throw new Error('runDue needs a handler (or start() first)')
      const started = tick(h)
      await Promise.allSettled(started)
      flushFinished()
      return started.length
    },

    async close() {
      closed = true
      startedHandler = null
      if (timer) clearTimeout(timer)
      while (inFlight.size > 0) await Promise.allSettled([...inFlight])
      flushFinished()
    },
  }
  return scheduler
}

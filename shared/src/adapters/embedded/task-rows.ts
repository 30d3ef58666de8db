import type { DatabaseSync } from 'node:sqlite'
import type { Logger } from 'pino'
import { QueueQuotaError } from '../../errors/queue-errors.ts'
import type { QueueRate, TaskRequest } from '../../ports/task-scheduler.ts'
import type { EmbeddedDb } from './db.ts'
import { leaseOwnersOf, REAP_EVERY_MS } from './lease-owners.ts'
import type { DispatchBudget } from './task-budget.ts'

export interface TaskRow {
  queue: string
  name: string
  payload: Uint8Array
  dispatch_count: number
  /** the enqueuer's trace (W3C), as Cloud Tasks carries it in the task's headers; null without one */
  traceparent: string | null
}

const DEFAULT_RATE: QueueRate = { maxDispatchesPerSecond: 1, maxConcurrentDispatches: 1 }
/**
 * a dispatch that has not finished after this long is dispatched again; a process that died is
 * noticed at once (lease-owners.ts) and its tasks run again without waiting for this
 */
const LEASE_MS = 10 * 60_000
/** finished tasks are kept this long so a late enqueue of the same name stays deduplicated */
const TOMBSTONE_MS = 24 * 60 * 60_000

/** Creates the tables, and adds the columns an older file lacks. */
function openTaskTables(db: DatabaseSync): void {
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
}

export interface TaskRows {
  /** creates or updates a queue; refuses a new one past `maxQueues` */
  ensureQueue(queue: string, rate: QueueRate, maxQueues: number | undefined): void
  /** a task, unless one of that name exists (or ran within a day) */
  insert(task: TaskRequest, runAt: number, traceparent: string | null): void
  /**
   * In one transaction: marks the finished tasks done, releases the tasks of dead owners, and
   * leases the due tasks `budget` lets each queue start now.
   */
  claim(now: number, budget: DispatchBudget): TaskRow[]
  /** a dispatch that succeeded: marked done with the next claim's transaction (or flushFinished) */
  finished(row: TaskRow, at: number): void
  /** marks the finished tasks done (and makes the refused reschedules) now */
  flushFinished(): void
  /**
   * a dispatch that failed: the task is due again at `at`. When the write is refused (the file
   * locked past the busy timeout) it throws, and the reschedule is made with the next claim's
   * transaction (or flushFinished) instead of leaving the task to its lease
   */
  retry(row: TaskRow, at: number): void
  /** forgets the tombstones older than a day (at most hourly) */
  purgeTombstones(now: number): void
  /** Makes the tasks of owners that died since this scheduler last looked due again; inside a transaction. */
  reapDeadOwners(): void
}

/**
 * The embedded task scheduler's rows. A task is a row keyed by (queue, name), so a second enqueue
 * of a name is ignored, also after the task ran (the row stays as a tombstone for a day). A
 * dispatch leases its task for LEASE_MS and records the process that holds it (`lease_owner`):
 * when that process is gone (a crash, a SIGKILL), the task is due again as soon as a scheduler on
 * the file sees it.
 */
export function taskRows(edb: EmbeddedDb, logger: Logger): TaskRows {
  const { db } = edb
  openTaskTables(db)
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

  const owners = leaseOwnersOf(edb)
  const reaper = {} // this scheduler, as lease-owners.ts tells dead owners apart per adapter
  let lastReap = 0
  let lastPurge = 0

  function ratesByQueue(): Map<string, QueueRate> {
    const rows = selectQueues.all() as Array<{ queue: string; max_dispatches_per_second: number; max_concurrent_dispatches: number }>
    return new Map(rows.map((r) => [r.queue, { maxDispatchesPerSecond: r.max_dispatches_per_second, maxConcurrentDispatches: r.max_concurrent_dispatches }]))
  }

  // marked done with the next transaction (one commit for many tasks, not one each); until then
  // its lease keeps a task from running again, and a crash in between only lets it run once more
  // after the lease — the at-least-once every task handler already allows for
  const finished: Array<{ queue: string; name: string; at: number }> = []
  // failed dispatches whose reschedule was refused: made with the next transaction, not left to
  // their lease (10 minutes; one locked write under load held a delivery that long)
  const retries: Array<{ queue: string; name: string; at: number }> = []
  /**
   * Runs fn in one transaction that first marks the finished tasks done and reschedules the
   * retries still to write. If the transaction fails they stay queued for the next one (their
   * leases still keep them from running).
   */
  function withFinished<T>(fn: () => T): T {
    const batch = finished.splice(0)
    const retryBatch = retries.splice(0)
    try {
      return edb.transaction(() => {
        for (const f of batch) finishTask.run(f.at, f.queue, f.name)
        for (const r of retryBatch) retryTask.run(r.at, r.queue, r.name)
        return fn()
      })
    } catch (err) {
      finished.unshift(...batch)
      retries.unshift(...retryBatch)
      throw err
    }
  }

  const rows: TaskRows = {
    ensureQueue(queue, rate, maxQueues) {
      edb.transaction(() => {
        if (maxQueues !== undefined && !queueExists.get(queue) && Number((countQueues.get() as { n: number }).n) >= maxQueues) throw new QueueQuotaError(queue)
        upsertQueue.run(queue, rate.maxDispatchesPerSecond, Math.floor(rate.maxConcurrentDispatches))
      })
    },
    insert(task, runAt, traceparent) {
      insertTask.run(task.queue, task.name, task.payload, runAt, traceparent)
    },
    claim(now, budget) {
      return withFinished(() => {
        // the rates in the claim's own snapshot: read before it, they took a read lock of their
        // own, 2.6-3.4 µs a tick (docs/performance.md, "Eleventh pass")
        const rates = ratesByQueue()
        const claimed: TaskRow[] = []
        if (Date.now() - lastReap >= REAP_EVERY_MS) rows.reapDeadOwners()
        const dueQueues = selectDueQueues.all(now, now) as Array<{ queue: string }>
        for (const { queue } of dueQueues) {
          const free = budget.free(queue, rates.get(queue) ?? DEFAULT_RATE, now)
          if (free <= 0) continue
          const due = selectDue.all(queue, now, now, free) as unknown as TaskRow[]
          for (const row of due) {
            leaseTask.run(now + LEASE_MS, owners.self, row.queue, row.name)
            claimed.push({ ...row, dispatch_count: row.dispatch_count + 1 })
          }
          budget.spend(queue, due.length)
        }
        return claimed
      })
    },
    finished(row, at) {
      finished.push({ queue: row.queue, name: row.name, at })
    },
    flushFinished() {
      if (finished.length > 0 || retries.length > 0) withFinished(() => undefined)
    },
    retry(row, at) {
      try {
        retryTask.run(at, row.queue, row.name)
      } catch (err) {
        retries.push({ queue: row.queue, name: row.name, at })
        throw err
      }
    },
    purgeTombstones(now) {
      if (now - lastPurge <= 60 * 60_000) return
      lastPurge = now
      purgeTombstones.run(now - TOMBSTONE_MS)
    },
    reapDeadOwners() {
      lastReap = Date.now()
      for (const owner of owners.deadOwners(reaper)) {
        const { changes } = releaseOwner.run(owner)
        if (Number(changes) > 0) logger.warn({ owner, tasks: Number(changes) }, 'tasks leased by a process that is gone dispatched again at once')
      }
    },
  }
  return rows
}

import type { DatabaseSync } from 'node:sqlite'
import { open, type FileHandle } from 'node:fs/promises'
import type { GateTurns } from './write-gate.ts'

/** BEGIN IMMEDIATE … COMMIT on `db` (ROLLBACK on throw); nested calls join the outer one; each takes its turn at the write gate. */
export function transactions(db: DatabaseSync, gate: GateTurns): { transaction<T>(fn: () => T): T; inTransaction(): boolean } {
  let depth = 0
  return {
    transaction<T>(fn: () => T): T {
      if (depth > 0) return fn()
      gate.enter()
      try {
        db.exec('BEGIN IMMEDIATE')
        depth++
        try {
          const result = fn()
          db.exec('COMMIT')
          return result
        } catch (err) {
          db.exec('ROLLBACK')
          throw err
        } finally {
          depth--
        }
      } finally {
        gate.leave()
      }
    },
    inTransaction: () => depth > 0,
  }
}

interface GroupedWrite {
  fn: () => unknown
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/**
 * The writes queued in one turn of the event loop, run in one transaction (one commit, not one
 * each): EmbeddedDb.groupCommit. `flush` commits what is queued now; once `closed` is true, what
 * is queued is refused.
 */
export function groupCommits(
  gate: GateTurns,
  transaction: <T>(fn: () => T) => T,
  closed: () => boolean,
): { groupCommit<T>(fn: () => T): Promise<T>; flush(): void } {
  let grouped: GroupedWrite[] = []

  function flush(): void {
    const batch = grouped
    grouped = []
    if (batch.length > 0) gate.done() // announced when the first of them was queued
    if (batch.length === 0 || closed()) {
      for (const w of batch) w.reject(new Error('database closed'))
      return
    }
    const failed = new Map<GroupedWrite, unknown>()
    const results = new Map<GroupedWrite, unknown>()
    try {
      transaction(() => {
        for (const w of batch) {
          // a failing statement is undone by SQLite on its own; the transaction goes on
          try {
            results.set(w, w.fn())
          } catch (err) {
            failed.set(w, err)
          }
        }
      })
    } catch (err) {
      for (const w of batch) w.reject(err)
      return
    }
    for (const w of batch) {
      if (failed.has(w)) w.reject(failed.get(w))
      else w.resolve(results.get(w))
    }
  }

  return {
    groupCommit<T>(fn: () => T): Promise<T> {
      if (closed()) return Promise.reject(new Error('database closed'))
      return new Promise<T>((resolve, reject) => {
        if (grouped.length === 0) {
          gate.want()
          // after a background thread's transaction under way, waited for off the event loop
          setImmediate(() => {
            const clear = gate.clear()
            if (clear) void clear.then(flush)
            else flush()
          })
        }
        grouped.push({ fn, resolve: resolve as (value: unknown) => void, reject })
      })
    },
    flush,
  }
}

/**
 * fdatasync of `file` (the WAL; the database file itself without WAL) on libuv's thread pool:
 * EmbeddedDb.syncWal. Concurrent calls share syncs: at most one runs, and one more queues behind
 * it. `release` closes the file handle once the syncs under way are done.
 */
export function walSyncer(file: string, closed: () => boolean): { sync(): Promise<void>; release(): Promise<void> } {
  // the WAL file stays in place while the connection is open (SQLite removes it on the last close)
  let wal: Promise<FileHandle> | null = null
  let running: Promise<void> | null = null
  let queued: Promise<void> | null = null
  async function syncOnce(): Promise<void> {
    const handle = (wal ??= open(file, 'r+'))
    try {
      await (await handle).datasync()
    } catch (err) {
      // a failed open or sync is not cached: the next call opens the file again. The handle of a
      // failed sync is closed here: dropped, it held its descriptor until a garbage collection
      // closed it (with node's warning, an error in a later node)
      if (wal === handle) wal = null
      void handle.then((h) => h.close()).catch(() => {})
      throw err
    }
  }
  function sync(): Promise<void> {
    if (closed()) return Promise.reject(new Error('database closed'))
    if (!running) {
      running = syncOnce().finally(() => {
        running = null
      })
      return running
    }
    // a sync already under way may have started before the caller's commit: queue one more
    queued ??= running
      .catch(() => {})
      .then(() => {
        queued = null
        return sync()
      })
    return queued
  }
  return {
    sync,
    release() {
      const handle = wal
      wal = null
      // after any sync still running; the handle is not needed by SQLite
      return Promise.allSettled([running, queued]).then(() => handle?.then((h) => h.close()).catch(() => {}))
    },
  }
}

import type { DatabaseSync } from 'node:sqlite'
import { open, type FileHandle } from 'node:fs/promises'
import type { GateTurns } from './write-gate.ts'

/**
 * BEGIN IMMEDIATE … COMMIT on `db` (ROLLBACK on throw); nested calls join the outer one; each takes
 * its turn at the write gate. `commits` counts the transactions committed so far (walSyncer).
 */
export function transactions(db: DatabaseSync, gate: GateTurns): { transaction<T>(fn: () => T): T; inTransaction(): boolean; commits(): number } {
  let depth = 0
  let committed = 0
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
          committed++
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
    commits: () => committed,
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
 * EmbeddedDb.syncWal. A sync covers every commit made before it started. `commits` counts the
 * connection's commits (transactions().commits): a caller who committed before the sync under way
 * started (no commit since) shares it; one who committed after it started gets the next one, which
 * starts when it ends; at most one runs and one more waits. `release` closes the file handle once
 * the syncs under way are done.
 *
 * A group commit's writers each ask for the sync after the same commit: the first starts one, and
 * the others share it. They used to wait for the one after it instead (a sync under way was taken
 * as started before their commit), twice a sync's time for all but one push of a group
 * (docs/performance.md, "Twelfth pass").
 */
export function walSyncer(file: string, closed: () => boolean, commits: () => number): { sync(): Promise<void>; release(): Promise<void> } {
  // the WAL file stays in place while the connection is open (SQLite removes it on the last close)
  let wal: Promise<FileHandle> | null = null
  /** the sync under way, and the connection's commit count when it started (every commit up to it is covered) */
  let running: { promise: Promise<void>; covers: number } | null = null
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
      const started = { covers: commits(), promise: syncOnce() }
      running = started
      started.promise
        .finally(() => {
          if (running === started) running = null
        })
        .catch(() => {})
      return started.promise
    }
    // no commit since the sync under way started: it covers the caller's
    if (running.covers >= commits()) return running.promise
    // it may have started before the caller's commit: queue one more
    queued ??= running.promise
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
      return Promise.allSettled([running?.promise, queued]).then(() => handle?.then((h) => h.close()).catch(() => {}))
    },
  }
}

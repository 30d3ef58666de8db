import { DatabaseSync } from 'node:sqlite'
import { mkdirSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The embedded adapters' one database: `<dataDir>/platform.db`, SQLite in WAL mode.
 *
 * Durability: every commit survives a crash of the process (it is in the WAL before the call
 * returns). Commits that answer a client's "accepted" (a queued batch) must survive a crash of
 * the machine too: such a commit is followed by `syncWal()`, which fdatasyncs the WAL file on
 * libuv's thread pool — the event loop keeps serving while the disk works, and one sync covers
 * every commit made before it started (group commit). Other commits use
 * `synchronous=NORMAL` (no fsync per commit): after a
 * power loss the WAL may lose a suffix of recent commits, never a middle one, so state stays
 * consistent (an upsert can only be lost together with the queue ack that followed it, and the
 * message is then delivered again). Each adapter creates its own tables.
 */
export interface EmbeddedDb {
  readonly db: DatabaseSync
  readonly path: string
  readonly dataDir: string
  /** runs fn inside BEGIN IMMEDIATE … COMMIT (ROLLBACK on throw); nested calls join the outer one */
  transaction<T>(fn: () => T): T
  /**
   * Resolves once every commit made before the call is on disk (WAL fdatasync off the event
   * loop). Concurrent calls share syncs: at most one runs, and one more queues behind it.
   */
  syncWal(): Promise<void>
  /**
   * Runs fn with the other writes queued in the same turn of the event loop, in one transaction
   * (one commit, not one each), and resolves with fn's result once that commit is done. A write
   * that throws rejects alone; a failed commit rejects them all. For hot paths whose callers
   * await the write anyway.
   */
  groupCommit<T>(fn: () => T): Promise<T>
  close(): void
}

export function openEmbeddedDb(dataDir: string, file = 'platform.db'): EmbeddedDb {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, file)
  const db = new DatabaseSync(path)
  // busy_timeout first: switching to WAL takes a lock, and processes opening one file at once must wait, not fail
  db.exec('PRAGMA busy_timeout = 10000')
  const mode = (db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  let depth = 0
  let closed = false

  // the WAL file stays in place while this connection is open (SQLite removes it on the last close)
  let wal: Promise<FileHandle> | null = null
  let running: Promise<void> | null = null
  let queued: Promise<void> | null = null
  async function syncOnce(): Promise<void> {
    // without WAL (a filesystem without shared memory) a commit writes the database file itself
    wal ??= open(mode === 'wal' ? `${path}-wal` : path, 'r+')
    try {
      await (await wal).datasync()
    } catch (err) {
      wal = null // a failed open or sync is not cached: the next call opens the file again
      throw err
    }
  }
  function syncWal(): Promise<void> {
    if (closed) return Promise.reject(new Error('database closed'))
    if (!running) {
      running = syncOnce().finally(() => { running = null })
      return running
    }
    // a sync already under way may have started before the caller's commit: queue one more
    queued ??= running.catch(() => {}).then(() => { queued = null; return syncWal() })
    return queued
  }

  interface GroupedWrite { fn: () => unknown; resolve: (value: unknown) => void; reject: (err: unknown) => void }
  let grouped: GroupedWrite[] = []
  function flushGrouped(): void {
    const batch = grouped
    grouped = []
    if (batch.length === 0 || closed) {
      for (const w of batch) w.reject(new Error('database closed'))
      return
    }
    const failed = new Map<GroupedWrite, unknown>()
    const results = new Map<GroupedWrite, unknown>()
    try {
      transaction(() => {
        for (const w of batch) {
          // a failing statement is undone by SQLite on its own; the transaction goes on
          try { results.set(w, w.fn()) } catch (err) { failed.set(w, err) }
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

  function transaction<T>(fn: () => T): T {
    if (depth > 0) return fn()
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
  }

  return {
    db,
    path,
    dataDir,
    transaction,
    groupCommit<T>(fn: () => T): Promise<T> {
      if (closed) return Promise.reject(new Error('database closed'))
      return new Promise<T>((resolve, reject) => {
        if (grouped.length === 0) setImmediate(flushGrouped)
        grouped.push({ fn, resolve: resolve as (value: unknown) => void, reject })
      })
    },
    syncWal,
    close() {
      if (closed) return
      flushGrouped() // writes already accepted are committed, not dropped
      closed = true
      const handle = wal
      wal = null
      // after any sync still running; the handle is not needed by SQLite
      void Promise.allSettled([running, queued]).then(() => handle?.then((h) => h.close()).catch(() => {}))
      db.close()
    },
  }
}

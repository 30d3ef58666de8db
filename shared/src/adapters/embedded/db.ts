import { DatabaseSync } from 'node:sqlite'
import { mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { createWriteGateBuffer, gateTurns, type WriteGate } from './write-gate.ts'
import { groupCommits, transactions, walSyncer } from './db-commits.ts'

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
 *
 * Housekeeping runs off the event loop (maintenance-thread.ts, a worker thread with its own
 * connection): WAL checkpoints (automatic ones are off on this connection: SQLite would run them
 * inside a commit, on the event loop) and, with auto_vacuum=INCREMENTAL, giving free pages back
 * to the file system, so the file follows the live data instead of its high-water mark.
 */
export interface EmbeddedDb {
  readonly db: DatabaseSync
  readonly path: string
  readonly dataDir: string
  /** runs fn inside BEGIN IMMEDIATE … COMMIT (ROLLBACK on throw); nested calls join the outer one */
  transaction<T>(fn: () => T): T
  /**
   * Inside a long transaction: another thread's writer waits for the lock (write-gate.ts), and
   * this transaction held it long enough to commit what it did and go on in a new one. Always
   * false outside a write gate.
   */
  yieldRequested(): boolean
  /**
   * Resolves once every commit made before the call through `transaction` or `groupCommit` is on
   * disk (WAL fdatasync off the event loop; a statement run outside them is not counted). Calls
   * share syncs: one with no commit since the sync under way started shares it; otherwise it
   * waits for the next, and at most one runs while one more waits (db-commits.ts walSyncer).
   */
  syncWal(): Promise<void>
  /**
   * Runs fn with the other writes queued in the same turn of the event loop, in one transaction
   * (one commit, not one each), and resolves with fn's result once that commit is done. A write
   * that throws rejects alone; a failed commit rejects them all. For hot paths whose callers
   * await the write anyway.
   */
  groupCommit<T>(fn: () => T): Promise<T>
  /** pages of the file, free pages among them, and the page size */
  stats(): { pageSize: number; pages: number; freePages: number; autoVacuum: 'none' | 'full' | 'incremental' }
  /**
   * A database file created before auto_vacuum=INCREMENTAL keeps every page it ever had: rewrites
   * it once (VACUUM) so free pages can be given back from then on. Blocks for a time proportional
   * to the live data; meant for start-up, after the caller removed what is not worth copying.
   * Returns whether it converted.
   */
  convertToIncrementalVacuum(): boolean
  /** runs the housekeeping now and resolves when it is done (tests, benchmarks) */
  maintain(): Promise<void>
  /**
   * Closes the connection at once (later writes are refused); settles once nothing of it touches
   * the folder any more (the maintenance thread has exited). Idempotent.
   */
  close(): Promise<void>
}

export interface EmbeddedDbOptions {
  /** how often the WAL size is checked for a checkpoint (default 200 ms) */
  maintenanceIntervalMs?: number
  /** the WAL is checkpointed once larger than this (default 4 MiB, SQLite's own default) */
  checkpointBytes?: number
  /** free pages kept for reuse before any is given back (default 2048, 8 MiB) */
  slackPages?: number
  /**
   * turns at the write lock with connections of other threads of this process (write-gate.ts).
   * A `background` connection also leaves the file's housekeeping to the serving one, whose
   * maintenance thread watches the WAL whoever writes it.
   */
  writeGate?: WriteGate
}

/** how long opening may wait for other processes opening or writing the same file */
const OPEN_TIMEOUT_MS = 10_000
const SQLITE_BUSY = 5
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/**
 * Runs a set-up statement, retrying while the file is locked. Needed on top of busy_timeout:
 * `PRAGMA journal_mode = WAL` on a fresh file reads page 1, then upgrades to a write, and SQLite
 * returns SQLITE_BUSY without calling the busy handler when such an upgrade meets another
 * connection's write (waiting could deadlock). Two processes opening one fresh folder at the same
 * moment hit it (1 of 80 opens here).
 */
export function retryWhileBusy<T>(fn: () => T, timeoutMs = OPEN_TIMEOUT_MS): T {
  const deadline = Date.now() + timeoutMs
  for (let attempt = 0; ; attempt++) {
    try {
      return fn()
    } catch (err) {
      const code = (err as { errcode?: number }).errcode
      if (code === undefined || (code & 0xff) !== SQLITE_BUSY || Date.now() > deadline) throw err
      sleepSync(Math.min(100, 5 * 2 ** attempt) * (0.5 + Math.random()))
    }
  }
}

/**
 * Opens the connection and sets it up: WAL, busy timeout, no automatic checkpoints (the
 * maintenance thread runs them), a larger page cache. Returns it with its journal mode.
 */
function connect(path: string): { db: DatabaseSync; wal: boolean } {
  const db = new DatabaseSync(path)
  // busy_timeout first: switching to WAL takes a lock, and processes opening one file at once must wait, not fail
  db.exec(`PRAGMA busy_timeout = ${OPEN_TIMEOUT_MS}`)
  // before anything creates page 1: a fresh file gives freed pages back (an existing file keeps its mode)
  retryWhileBusy(() => db.exec('PRAGMA auto_vacuum = INCREMENTAL'))
  const mode = retryWhileBusy(() => (db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string }).journal_mode)
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  // checkpoints run on the maintenance thread (startMaintenance), not inside a commit on the event loop
  db.exec('PRAGMA wal_autocheckpoint = 0')
  // a WAL that grew for one big transaction shrinks back once checkpointed
  db.exec(`PRAGMA journal_size_limit = ${16 * 1024 * 1024}`)
  // 32 MiB of page cache instead of 2: a batch's 5,000 point reads hit memory instead of read()
  // calls (about 15 % less CPU per batch upserted, measured)
  db.exec('PRAGMA cache_size = -32768')
  return { db, wal: mode === 'wal' }
}

/** pages of the file, free pages among them, and the page size */
function statsOf(db: DatabaseSync): ReturnType<EmbeddedDb['stats']> {
  const pragma = (name: string) => Number(Object.values(db.prepare(`PRAGMA ${name}`).get() as Record<string, unknown>)[0])
  const av = pragma('auto_vacuum')
  return {
    pageSize: pragma('page_size'),
    pages: pragma('page_count'),
    freePages: pragma('freelist_count'),
    autoVacuum: av === 2 ? 'incremental' : av === 1 ? 'full' : 'none',
  }
}

/**
 * The embedded database at `<dataDir>/<file>`: its connection (connect), transactions, group
 * commits and WAL syncs (db-commits.ts), and the housekeeping thread (startMaintenance).
 */
export function openEmbeddedDb(dataDir: string, file = 'platform.db', options: EmbeddedDbOptions = {}): EmbeddedDb {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, file)
  const { db, wal } = connect(path)
  let closed = false
  let closing: Promise<void> = Promise.resolve()
  // a gate of its own when no thread shares one: the maintenance thread takes its turns there too
  const writeGate = options.writeGate ?? { buffer: createWriteGateBuffer(), role: 'serving' }
  const gate = gateTurns(writeGate)
  // a background thread's connection: the main thread's connection owns checkpoints and vacuum
  const maintenance =
    writeGate.role === 'background' ? { now: async () => {}, stop: async () => {} } : startMaintenance(path, wal, db, options, writeGate.buffer)
  const { transaction, inTransaction, commits } = transactions(db, gate)
  const grouped = groupCommits(gate, transaction, () => closed)
  // without WAL (a filesystem without shared memory) a commit writes the database file itself
  const syncer = walSyncer(wal ? `${path}-wal` : path, () => closed, commits)

  return {
    db,
    path,
    dataDir,
    transaction,
    yieldRequested: () => inTransaction() && gate.yieldRequested(),
    groupCommit: grouped.groupCommit,
    syncWal: syncer.sync,
    stats: () => statsOf(db),
    convertToIncrementalVacuum() {
      if (statsOf(db).autoVacuum === 'incremental') return false
      retryWhileBusy(() => {
        db.exec('PRAGMA auto_vacuum = INCREMENTAL')
        db.exec('VACUUM')
      }, 60_000)
      return true
    },
    maintain: () => maintenance.now(),
    close() {
      if (closed) return closing
      grouped.flush() // writes already accepted are committed, not dropped
      closed = true
      const stopped = maintenance.stop()
      const released = syncer.release()
      db.close()
      // settled once nothing of this handle touches the folder any more: the maintenance thread has
      // closed its connection (the last close checkpoints and removes the WAL) and the WAL's file
      // handle is closed, so the folder can be removed or opened afresh
      closing = Promise.all([stopped, released]).then(() => undefined)
      return closing
    },
  }
}

interface Maintenance {
  now(): Promise<void>
  /** settles once the thread (if one started) has exited */
  stop(): Promise<void>
}

/**
 * Watches the WAL file from the event loop (a stat every interval, microseconds) and hands the
 * work to the maintenance thread: while it is being written, a PASSIVE checkpoint each time it
 * passed the threshold; once the writes pause (a whole interval without one), one run that may
 * also shrink the file and give free pages back, the steps that take the write lock. The thread
 * starts on first need, so a process that never writes never starts it. If it cannot start,
 * SQLite's own automatic checkpoints come back.
 */
function startMaintenance(path: string, wal: boolean, db: DatabaseSync, options: EmbeddedDbOptions, gate: SharedArrayBuffer): Maintenance {
  const checkpointBytes = options.checkpointBytes ?? 4 * 1024 * 1024
  const slackPages = options.slackPages ?? 2048
  let worker: Worker | null = null
  let busy: Promise<void> | null = null
  let stopped = false
  const walStat = () => {
    try {
      return wal ? statSync(`${path}-wal`) : null
    } catch {
      return null
    }
  }
  const walBytes = () => walStat()?.size ?? 0
  const ensureWorker = (): Worker | null => {
    if (worker || stopped) return worker
    try {
      worker = new Worker(new URL('./maintenance-thread.ts', import.meta.url), {
        workerData: { path, checkpointBytes, slackPages, stepPages: 256, gate },
      })
      worker.unref()
      worker.on('error', () => {
        // housekeeping lost: SQLite checkpoints inside commits again (slower, never unbounded)
        worker = null
        if (!stopped) db.exec('PRAGMA wal_autocheckpoint = 1000')
      })
    } catch {
      db.exec('PRAGMA wal_autocheckpoint = 1000')
      stopped = true
    }
    return worker
  }
  /** `quiet`: the WAL went unwritten for a whole interval, so the thread may shrink it (TRUNCATE) */
  const run = (force = false, quiet = force): Promise<void> => {
    if (busy) return busy
    const w = ensureWorker()
    if (!w) return Promise.resolve()
    busy = new Promise<void>((resolve) => {
      const done = () => {
        w.off('message', done)
        w.off('exit', done)
        busy = null
        resolve()
      }
      w.on('message', done)
      w.on('exit', done)
      w.postMessage({ kind: 'tick', walBytes: walBytes(), force, quiet })
    })
    return busy
  }
  /** the WAL's mtime at the previous look, and at the last pause the thread was run for */
  let lastLookMtime = -1
  let pauseRunMtime = walStat()?.mtimeMs ?? -1
  const timer = setInterval(() => {
    if (busy) return
    const st = walStat()
    if (!st) return
    // unwritten since the previous look: the writers paused (an idle database costs a stat per tick)
    const quiet = st.mtimeMs === lastLookMtime
    lastLookMtime = st.mtimeMs
    if (!quiet) {
      // writes under way: a large WAL is checkpointed at once (PASSIVE never holds up a writer)
      if (st.size > checkpointBytes) void run(false, false)
      return
    }
    // once per pause after writes: a WAL the burst grew is shrunk and free pages (deleted rows)
    // are given back, the steps that take the write lock, now that they hold up no writer
    if (st.mtimeMs !== pauseRunMtime) {
      pauseRunMtime = st.mtimeMs
      void run(false, true)
    }
  }, options.maintenanceIntervalMs ?? 200)
  timer.unref()
  return {
    now: async () => {
      await busy
      await run(true)
    },
    stop() {
      stopped = true
      clearInterval(timer)
      const w = worker
      worker = null
      if (!w) return Promise.resolve()
      const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()))
      // held while it closes: an unref'd thread would let the process end first, and whoever
      // awaits close() (a shutdown that exits with its own code) would never resume
      w.ref()
      w.postMessage({ kind: 'close' })
      return exited
    },
  }
}

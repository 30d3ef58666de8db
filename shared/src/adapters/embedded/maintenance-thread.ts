/**
 * Worker-thread entry (started by db.ts): the database file's housekeeping on a connection of its
 * own, so that none of it runs on the event loop of the process that serves requests.
 *
 * - WAL checkpoints: the serving connection has automatic checkpoints off. A checkpoint copies
 *   the WAL into the database file and fsyncs it; run by SQLite after a commit it took 30–180 ms of
 *   the event loop per big commit under load (measured: most of the time /healthz waited).
 *   PASSIVE copies the bulk without waiting for other connections; the rest is copied in an
 *   exclusive turn at the write gate (write-gate.ts) with RESTART, so that the next commit starts
 *   the WAL over even under a stream of writes.
 * - Free pages: with auto_vacuum=INCREMENTAL, pages freed by deleted rows (acked messages) beyond
 *   a slack are given back to the file system in small steps (`incremental_vacuum`), each a short
 *   write transaction in a turn of its own, so writers on other connections wait at most one step.
 * - The steps that hold the lock longer (TRUNCATE, which also syncs and shrinks the file, and the
 *   vacuum) run only once the writers are quiet (`quiet`: the WAL went unwritten for a whole
 *   interval of the serving side's watch); a WAL file past a hard bound (16 checkpoint sizes) is
 *   truncated anyway.
 *
 * Messages in: `{ kind: 'tick', walBytes, force, quiet }` (do what is due; force: checkpoint whatever
 * the size; quiet: nobody wrote for a while, so a large WAL may be truncated) and `{ kind: 'close' }`; out: `{ kind: 'done' }`
 * after each tick, `{ kind: 'error', message }` when a step failed (the next tick tries again).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { DatabaseSync } from 'node:sqlite'
import { gateTurns } from './write-gate.ts'

interface Data {
  path: string
  /** checkpoint once the WAL file is larger than this */
  checkpointBytes: number
  /** free pages kept for reuse before any is given back */
  slackPages: number
  /** pages given back per step */
  stepPages: number
  /** the serving connection's write gate (write-gate.ts): this thread takes its turns there as a background writer */
  gate: SharedArrayBuffer
}

const data = workerData as Data
/**
 * Steps that must see no commit meanwhile, or that take the write lock, run in exclusive turns
 * here (`gate.exclusive`): after the serving thread's transaction under way, with its next writes
 * waiting for the end (woken the moment it ends, grouped writes off the event loop) instead of
 * appending meanwhile or sleeping in SQLite's busy handler.
 */
const gate = gateTurns({ buffer: data.gate, role: 'background' })
const port = parentPort!
const db = new DatabaseSync(data.path)
// short waits only: this connection is never in a hurry, the serving one is
db.exec('PRAGMA busy_timeout = 200')
db.exec('PRAGMA wal_autocheckpoint = 0')
const freelist = db.prepare('PRAGMA freelist_count')
const pageCount = db.prepare('PRAGMA page_count')
const autoVacuum = db.prepare('PRAGMA auto_vacuum')
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
const num = (row: unknown) => Number(Object.values(row as Record<string, unknown>)[0])
const pageSize = num(db.prepare('PRAGMA page_size').get())

const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)')
const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)')
/** what `PRAGMA wal_checkpoint` answers: frames in the WAL, frames copied, and whether it could not finish */
type Checkpointed = { busy: number; log: number; checkpointed: number }
/** a checkpoint pass this short leaves little for the turn at the gate to copy */
const SHORT_PASS_MS = 10
const MAX_BULK_PASSES = 4
/** a WAL file past this many checkpoint sizes is shrunk even while writes go on (64 MiB by default) */
const HARD_BOUND_CHECKPOINTS = 16

function tick(walBytes: number, force: boolean, quiet: boolean): void {
  if (force || walBytes > data.checkpointBytes) {
    // the bulk, while the writers go on; again while a pass took long, since what the writers
    // appended meanwhile is what the turn below copies with them waiting
    let bulk: Checkpointed
    for (let pass = 0; ; pass++) {
      const started = performance.now()
      bulk = checkpoint.get() as Checkpointed
      if (performance.now() - started < SHORT_PASS_MS || pass === MAX_BULK_PASSES - 1) break
    }
    if (bulk.busy === 0 && bulk.log === bulk.checkpointed) {
      // then, in a turn at the gate, the frames appended meanwhile, with the WAL's write lock
      // (RESTART: a write outside the gate, an autocommit statement, waits for it too) and once
      // no reader is still on the WAL: it ends wholly copied, and the next commit starts it over
      // from its beginning. SQLite restarts a WAL only then; with the copy always a few commits
      // behind a stream of writes, the WAL grew to 80–94 MiB in the dispatch bench and the
      // hard-bound TRUNCATE held every writer 190–240 ms (docs/performance.md, "Seventh pass").
      // TRUNCATE also shrinks the file: once the writers are quiet, or past the hard bound (the
      // file still large: one big transaction grew it); otherwise the restarted WAL is reused in
      // place, and journal_size_limit caps the file.
      const shrink = quiet || walBytes > HARD_BOUND_CHECKPOINTS * data.checkpointBytes
      // a restarted WAL keeps its file's size: what it holds is what counts, and a WAL holding
      // little is left to grow until the next look rather than holding the writers up for it
      if (!force && !shrink && bulk.log * pageSize < data.checkpointBytes) return
      gate.exclusive(() => {
        try {
          ;(shrink ? truncate : restart).get()
        } catch {
          // busy: a connection of another process held on past the busy timeout; the next tick tries again
        }
      })
    }
  }
  // giving pages back is a write transaction per step, with the same cost to a writer waiting for
  // the lock: left to a pause too (until then new rows reuse the free pages)
  if (!quiet || num(autoVacuum.get()) !== 2) return
  // give back what exceeds the slack (at least 10 % of the file stays reusable), in steps, each
  // in a turn of its own
  let released = false
  for (let step = 0; step < 64; step++) {
    const free = num(freelist.get())
    const excess = free - Math.max(data.slackPages, Math.floor(num(pageCount.get()) / 10))
    if (excess <= 0) break
    gate.exclusive(() => db.exec(`PRAGMA incremental_vacuum(${Math.min(excess, data.stepPages)})`))
    released = true
  }
  // the file shrinks when the shortened database is checkpointed
  if (released) checkpoint.get()
}

port.on('message', (message: { kind: 'tick'; walBytes: number; force: boolean; quiet: boolean } | { kind: 'close' }) => {
  if (message.kind === 'close') {
    try {
      db.close() // the last connection to close checkpoints and removes the WAL
    } catch {
      // the folder may be gone already (a test's cleanup): nothing left to tidy
    }
    port.close()
    return
  }
  try {
    tick(message.walBytes, message.force, message.quiet)
    port.postMessage({ kind: 'done' })
  } catch (err) {
    port.postMessage({ kind: 'error', message: (err as Error).message })
  }
})

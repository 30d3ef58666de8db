/**
 * Worker-thread entry (started by db.ts): the database file's housekeeping on a connection of its
 * own, so that none of it runs on the event loop of the process that serves requests.
 *
 * - WAL checkpoints: the serving connection has automatic checkpoints off. A checkpoint copies
 *   the WAL into the database file and fsyncs it; run by SQLite after a commit it took 30–180 ms of
 *   the event loop per big commit under load (measured: most of the time /healthz waited).
 *   PASSIVE never waits for other connections: frames still read by someone are copied next time.
 * - Free pages: with auto_vacuum=INCREMENTAL, pages freed by deleted rows (acked messages) beyond
 *   a slack are given back to the file system in small steps (`incremental_vacuum`), each a short
 *   write transaction, so writers on other connections wait at most one step.
 * - Both steps that take the write lock (TRUNCATE and the vacuum) run only once the writers are
 *   quiet (`quiet`: the WAL went unwritten for a whole interval of the serving side's watch), so a
 *   stream of writes does not wait for them in SQLite's busy handler; a WAL file past a hard bound
 *   (16 checkpoint sizes) is truncated anyway.
 *
 * Messages in: `{ kind: 'tick', walBytes, force, quiet }` (do what is due; force: checkpoint whatever
 * the size; quiet: nobody wrote for a while, so a large WAL may be truncated) and `{ kind: 'close' }`; out: `{ kind: 'done' }`
 * after each tick, `{ kind: 'error', message }` when a step failed (the next tick tries again).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { DatabaseSync } from 'node:sqlite'

interface Data {
  path: string
  /** checkpoint once the WAL file is larger than this */
  checkpointBytes: number
  /** free pages kept for reuse before any is given back */
  slackPages: number
  /** pages given back per step */
  stepPages: number
}

const data = workerData as Data
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

const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)')
/** a WAL file past this many checkpoint sizes is shrunk even while writes go on (64 MiB by default) */
const HARD_BOUND_CHECKPOINTS = 16

function tick(walBytes: number, force: boolean, quiet: boolean): void {
  if (force || walBytes > data.checkpointBytes) {
    const done = checkpoint.get() as { busy: number; log: number; checkpointed: number }
    // everything copied and the file still large (one big transaction grew it): shrink it, but
    // only once the writers are quiet, or when it grew past the hard bound. TRUNCATE holds the
    // write lock until it has copied what was appended meanwhile and synced the file: under a
    // stream of deliveries each one held the serving thread asleep in SQLite's busy handler for
    // 100–230 ms (docs/performance.md, "Sixth pass"). Meanwhile a complete checkpoint lets the
    // next commit start the WAL over, and journal_size_limit caps what the file keeps.
    const shrink = quiet || walBytes > HARD_BOUND_CHECKPOINTS * data.checkpointBytes
    if (shrink && done.busy === 0 && done.log === done.checkpointed && walBytes > data.checkpointBytes) {
      try {
        truncate.get()
      } catch {
        // busy: a writer came in meanwhile
      }
    }
  }
  // giving pages back is a write transaction per step, with the same cost to a writer waiting for
  // the lock: left to a pause too (until then new rows reuse the free pages)
  if (!quiet || num(autoVacuum.get()) !== 2) return
  // give back what exceeds the slack (at least 10 % of the file stays reusable), in steps
  let released = false
  for (let step = 0; step < 64; step++) {
    const free = num(freelist.get())
    const excess = free - Math.max(data.slackPages, Math.floor(num(pageCount.get()) / 10))
    if (excess <= 0) break
    db.exec(`PRAGMA incremental_vacuum(${Math.min(excess, data.stepPages)})`)
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

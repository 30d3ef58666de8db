import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import type { EmbeddedDb } from './db.ts'

/**
 * Who holds the embedded leases, so that work a dead process held is retried at once instead of
 * when its lease runs out (10 s for a queue message, 10 min for a delivery task).
 *
 * A lease records its owner: this process, named `<host>/<pid>/<start>` where `<start>` is the
 * process's start time in clock ticks since boot (/proc/<pid>/stat). Every thread of a process
 * computes the same name (the local stack's consumer threads have connections of their own), and
 * a process that reuses a dead one's pid (pid 1 in a restarted container) gets another name.
 * Each process records itself in `lease_owners` with a heartbeat. An owner is dead when
 * - it is on this host and /proc has no process of that pid with that start time (exact, at
 *   once: what a restart after a crash sees), or
 * - its heartbeat stopped longer than STALE_MS ago (another host or pid namespace, or a system
 *   without /proc, where the pid cannot be checked).
 * Adapters release the leases of dead owners when they open and, at most every REAP_EVERY_MS,
 * when they claim.
 */

const HEARTBEAT_MS = 5_000
/** an owner whose heartbeat stopped this long ago is dead wherever it ran (six missed beats) */
const STALE_MS = 30_000
/** owners dead this long are forgotten: every lease they held has run out by then (the longest is 10 min) */
const FORGET_MS = 60 * 60_000
export const REAP_EVERY_MS = 1_000

const HOST = hostname()

/** the start time of process `pid` in clock ticks since boot, or null (no such process, no /proc) */
function startTicksOf(pid: number | 'self'): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    // the command name (field 2) may hold spaces and parentheses: count from the last ')'
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

const selfStart = startTicksOf('self')
const hasProc = selfStart !== null
/** this process's owner name, the same on every thread */
const OWNER = `${HOST}/${process.pid}/${selfStart ?? Math.round(Date.now() / 1000 - process.uptime())}`

function isDead(owner: string, heartbeatAt: number, now: number): boolean {
  if (owner === OWNER) return false
  const [host, pid, start] = owner.split('/')
  if (host === HOST && hasProc && pid !== undefined) return startTicksOf(Number(pid)) !== start
  return heartbeatAt < now - STALE_MS
}

export interface LeaseOwners {
  /** this process's owner name, recorded on each lease it takes */
  readonly self: string
  /**
   * Owners recorded in the file that are dead and that `reaper` has not been given yet (each
   * adapter passes itself, so it releases an owner's leases once). Call inside the transaction
   * that releases them.
   */
  deadOwners(reaper: object): string[]
}

const byDb = new WeakMap<EmbeddedDb, LeaseOwners>()

/** The lease owners of `edb`'s file; records this process and starts its heartbeat (once per connection). */
export function leaseOwnersOf(edb: EmbeddedDb): LeaseOwners {
  const known = byDb.get(edb)
  if (known) return known
  const { db } = edb
  edb.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS lease_owners (owner TEXT PRIMARY KEY, heartbeat_at INTEGER NOT NULL) WITHOUT ROWID')
  })
  const beat = db.prepare('INSERT INTO lease_owners (owner, heartbeat_at) VALUES (?, ?) ON CONFLICT (owner) DO UPDATE SET heartbeat_at = excluded.heartbeat_at')
  const selectOthers = db.prepare('SELECT owner, heartbeat_at FROM lease_owners WHERE owner <> ?')
  const forget = db.prepare('DELETE FROM lease_owners WHERE owner = ?')
  // real time, not an adapter's injected clock: liveness is about processes, not simulated time
  edb.transaction(() => beat.run(OWNER, Date.now()))
  const timer = setInterval(() => {
    if (!db.isOpen) {
      clearInterval(timer)
      return
    }
    edb
      .groupCommit(() => beat.run(OWNER, Date.now()))
      .catch(() => {
        // a missed beat only matters after six of them; the next one retries
      })
  }, HEARTBEAT_MS)
  timer.unref()

  const given = new WeakMap<object, Set<string>>()
  const owners: LeaseOwners = {
    self: OWNER,
    deadOwners(reaper) {
      const now = Date.now()
      let seen = given.get(reaper)
      if (!seen) {
        seen = new Set()
        given.set(reaper, seen)
      }
      const dead: string[] = []
      for (const row of selectOthers.all(OWNER) as Array<{ owner: string; heartbeat_at: number }>) {
        if (!isDead(row.owner, row.heartbeat_at, now)) continue
        // kept a while for adapters of other processes that have not released its leases yet
        if (row.heartbeat_at < now - FORGET_MS) forget.run(row.owner)
        if (seen.has(row.owner)) continue
        seen.add(row.owner)
        dead.push(row.owner)
      }
      return dead
    },
  }
  byDb.set(edb, owners)
  return owners
}

import { DatabaseSync } from 'node:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The embedded adapters' one database: `<dataDir>/platform.db`, SQLite in WAL mode.
 *
 * Durability: every commit survives a crash of the process (it is in the WAL before the call
 * returns). Commits that answer a client's "accepted" (a queued batch) are made with
 * `durable()`: `synchronous=FULL` for that commit, fsynced before it returns, so they survive a
 * crash of the machine too. Other commits use `synchronous=NORMAL` (no fsync per commit): after a
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
  /** runs fn (its own transaction, or a single statement) with the commit fsynced before returning */
  durable<T>(fn: () => T): T
  close(): void
}

export function openEmbeddedDb(dataDir: string, file = 'platform.db'): EmbeddedDb {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, file)
  const db = new DatabaseSync(path)
  // busy_timeout first: switching to WAL takes a lock, and processes opening one file at once must wait, not fail
  db.exec('PRAGMA busy_timeout = 10000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = NORMAL')
  db.exec('PRAGMA foreign_keys = ON')
  let depth = 0
  let closed = false
  return {
    db,
    path,
    dataDir,
    transaction<T>(fn: () => T): T {
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
    },
    durable<T>(fn: () => T): T {
      if (depth > 0) throw new Error('durable() cannot join an open transaction')
      db.exec('PRAGMA synchronous = FULL')
      try {
        return fn()
      } finally {
        db.exec('PRAGMA synchronous = NORMAL')
      }
    },
    close() {
      if (closed) return
      closed = true
      db.close()
    },
  }
}

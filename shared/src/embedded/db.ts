import { DatabaseSync } from 'node:sqlite'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The embedded adapters' one database: `<dataDir>/platform.db`, SQLite in WAL mode with
 * `synchronous=FULL`, so a committed write (a queued batch, above all) survives a crash of the
 * process or the machine. Each adapter creates its own tables (CREATE TABLE IF NOT EXISTS).
 */
export interface EmbeddedDb {
  readonly db: DatabaseSync
  readonly path: string
  readonly dataDir: string
  /** runs fn inside BEGIN IMMEDIATE … COMMIT (ROLLBACK on throw); nested calls join the outer one */
  transaction<T>(fn: () => T): T
  close(): void
}

export function openEmbeddedDb(dataDir: string, file = 'platform.db'): EmbeddedDb {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, file)
  const db = new DatabaseSync(path)
  // busy_timeout first: switching to WAL takes a lock, and processes opening one file at once must wait, not fail
  db.exec('PRAGMA busy_timeout = 10000')
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA synchronous = FULL')
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
    close() {
      if (closed) return
      closed = true
      db.close()
    },
  }
}

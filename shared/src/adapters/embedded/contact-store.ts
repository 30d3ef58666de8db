import { retryWhileBusy, type EmbeddedDb } from './db.ts'
import { nextSlice } from '../../lib/slices.ts'
import type { ContactRecord, ContactUpsertInput } from '../../model/records.ts'
import { contactIdFor } from '../../model/ids.ts'
import type { ContactStore, MergeFn, UpsertBatchOptions, UpsertOutcome } from '../../ports/contact-store.ts'
import { applyGroup, DOCS_PER_CHUNK, errorText, failWrites, groupByDocument } from '../contact-upsert.ts'

/**
 * Contacts as JSON in `data`, plus the columns the lookups need. A chunk of documents is read,
 * merged and written inside one BEGIN IMMEDIATE transaction: the write lock is held from the read
 * on, so another writer (another handle or process on the same file) can never interleave and
 * the read-merge-write needs no version check.
 *
 * A rowid table with the (account_id, id) key as its own index, not a WITHOUT ROWID table: a
 * stored contact is 0.3–1 KB of JSON, and a WITHOUT ROWID table keeps whole rows in its key's
 * B-tree, four or so to a 4 KiB page (larger ones spill into overflow pages), so every new contact
 * (ids are hashes: random places in the key) rewrote a page of rows and split pages often. In a
 * rowid table new rows go to the end of the table's B-tree and only the key's small entries land
 * at random: a new contact cost 123 µs of CPU (69 µs of it system time, the WAL's page writes)
 * against 45 µs, 100,000 inserts of 900-byte rows in chunks of 500; updates and reads by id cost
 * the same (docs/performance.md, "The embedded contact table").
 */
const TABLE = `CREATE TABLE IF NOT EXISTS contacts (
  account_id TEXT NOT NULL, id TEXT NOT NULL, network_url TEXT, business_email TEXT, data TEXT NOT NULL,
  PRIMARY KEY (account_id, id))`
// each lookup index ends with the id, so the rows of one value come in id order (LOOKUP_SQL)
const INDEXES = `
CREATE INDEX IF NOT EXISTS contacts_network_url ON contacts (account_id, network_url, id);
CREATE INDEX IF NOT EXISTS contacts_business_email ON contacts (account_id, business_email, id);
`

/**
 * Creates the table, or rewrites one of the earlier WITHOUT ROWID layout into the rowid layout
 * (proportional to the stored contacts; once per file), in one write transaction: another
 * process opening the file meanwhile waits, then finds it done.
 */
function openContactTable(edb: EmbeddedDb): void {
  const { db } = edb
  retryWhileBusy(
    () =>
      edb.transaction(() => {
        const existing = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'contacts'").get() as { sql: string } | undefined
        if (existing && /WITHOUT\s+ROWID/i.test(existing.sql)) {
          db.exec(TABLE.replace('contacts', 'contacts_rowid'))
          db.exec(
            'INSERT INTO contacts_rowid (account_id, id, network_url, business_email, data) SELECT account_id, id, network_url, business_email, data FROM contacts',
          )
          // its indexes go with it, and are made again below on the new table
          db.exec('DROP TABLE contacts')
          db.exec('ALTER TABLE contacts_rowid RENAME TO contacts')
        } else db.exec(TABLE)
        db.exec(INDEXES)
      }),
    120_000,
  )
}

/**
 * The two lookups by column. INDEXED BY because SQLite's planner, without statistics, otherwise
 * answers `ORDER BY id LIMIT 1` by walking the primary key over every contact of the account
 * (a full scan: ~280 ms p99 for the portal's email lookup at 100,000 contacts, bench/portal.ts);
 * each index ends with the id, so the rows of one value are already in id order.
 */
export const LOOKUP_SQL = {
  byNetworkUrl: 'SELECT data FROM contacts INDEXED BY contacts_network_url WHERE account_id = ? AND network_url = ? ORDER BY id LIMIT 1',
  byEmail: 'SELECT data FROM contacts INDEXED BY contacts_business_email WHERE account_id = ? AND business_email = ? ORDER BY id LIMIT 1',
} as const

// one slice per turn of the event loop across all jobs (lib/slices.ts), so requests are polled between chunks
const yieldToEventLoop = nextSlice

export function createEmbeddedContactStore(edb: EmbeddedDb): ContactStore {
  const { db } = edb
  openContactTable(edb)
  const selectOne = db.prepare('SELECT data FROM contacts WHERE account_id = ? AND id = ?')
  const insert = db.prepare('INSERT INTO contacts (account_id, id, network_url, business_email, data) VALUES (?, ?, ?, ?, ?)')
  const update = db.prepare('UPDATE contacts SET network_url = ?, business_email = ?, data = ? WHERE account_id = ? AND id = ?')
  const byNetworkUrl = db.prepare(LOOKUP_SQL.byNetworkUrl)
  const byEmail = db.prepare(LOOKUP_SQL.byEmail)
  const pageFirst = db.prepare('SELECT data FROM contacts WHERE account_id = ? ORDER BY id LIMIT ?')
  const pageAfter = db.prepare('SELECT data FROM contacts WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?')
  // the previous page, read downwards from its end on the primary key, then put back in order
  const pageBefore = db.prepare('SELECT data FROM contacts WHERE account_id = ? AND id < ? ORDER BY id DESC LIMIT ?')

  const parse = (row: unknown): ContactRecord | null => (row ? (JSON.parse((row as { data: string }).data) as ContactRecord) : null)
  const get = (accountId: string, contactId: string) => parse(selectOne.get(accountId, contactId))

  const write = (accountId: string, contactId: string, next: ContactRecord, exists: boolean) => {
    const networkUrl = next.identity?.network_url ?? null
    const email = next.business_email ?? null
    const data = JSON.stringify(next)
    if (exists) update.run(networkUrl, email, data, accountId, contactId)
    else insert.run(accountId, contactId, networkUrl, email, data)
  }

  return {
    async upsertBatch(accountId: string, inputs: ContactUpsertInput[], merge: MergeFn, options: UpsertBatchOptions = {}) {
      const results: UpsertOutcome[] = new Array(inputs.length)
      const groups = groupByDocument(accountId, inputs)
      let done = 0
      let at = 0
      while (at < groups.length) {
        const end = Math.min(at + DOCS_PER_CHUNK, groups.length)
        edb.transaction(() => {
          while (at < end) {
            const group = groups[at++]!
            const existing = get(accountId, group.contactId)
            let { next, outcomes } = applyGroup(accountId, group, existing, inputs, merge)
            if (next) {
              try {
                write(accountId, group.contactId, next, existing !== null)
              } catch (err) {
                outcomes = failWrites(outcomes, errorText(err))
              }
            }
            group.indexes.forEach((index, k) => {
              results[index] = outcomes[k]!
            })
            done += group.indexes.length
            // a writer of another thread waits for the lock (the local stack's consumer thread
            // and its main thread, write-gate.ts): commit the chunk so far, go on after it
            if (edb.yieldRequested()) break
          }
        })
        options.onProgress?.(done)
        // a batch of thousands must not hold the event loop (and the write lock) in one stretch
        if (at < groups.length) await yieldToEventLoop()
      }
      return results
    },

    async get(accountId, contactId) {
      return get(accountId, contactId)
    },
    async getByAnchor(accountId, source, externalId) {
      return get(accountId, contactIdFor(accountId, source, externalId))
    },
    async findByNetworkUrl(accountId, networkUrl) {
      return parse(byNetworkUrl.get(accountId, networkUrl))
    },
    async findByBusinessEmail(accountId, email) {
      return parse(byEmail.get(accountId, email.toLowerCase()))
    },
    async list(accountId, { after, before, limit }) {
      if (limit <= 0) return []
      if (before !== undefined && after === undefined)
        return pageBefore
          .all(accountId, before, limit)
          .map((r) => parse(r)!)
          .reverse()
      const rows = after === undefined ? pageFirst.all(accountId, limit) : pageAfter.all(accountId, after, limit)
      return rows.map((r) => parse(r)!)
    },

    async deleteAccountData(accountId) {
      db.prepare('DELETE FROM contacts WHERE account_id = ?').run(accountId)
    },
    // the database handle belongs to whoever opened it (PlatformDeps closes it)
    async close() {},
  }
}

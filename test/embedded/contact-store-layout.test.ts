import { afterEach, describe, expect, it } from 'vitest'
import { DatabaseSync } from 'node:sqlite'
import { join } from 'node:path'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedContactStore } from '@lsv/shared/adapters/embedded/contact-store.ts'
import { mergeContact } from '@lsv/shared/domain/contacts/merge.ts'
import { contactIdFor } from '@lsv/shared/model/ids.ts'
import { tempDataDir } from '../helpers/embedded.ts'

/**
 * The embedded contact table's layout (adapters/embedded/contact-store.ts): a rowid table with
 * the (account_id, id) key as an index, so a new contact is appended instead of rewriting a page
 * of whole rows at a random place; a file of the earlier WITHOUT ROWID layout is rewritten into
 * it when the store opens, every contact kept and found by each lookup.
 */

const dirs: Array<ReturnType<typeof tempDataDir>> = []
const dbs: EmbeddedDb[] = []
afterEach(async () => {
  for (const edb of dbs.splice(0)) await edb.close()
  for (const d of dirs.splice(0)) d.cleanup()
})

function open(dir: string): EmbeddedDb {
  const edb = openEmbeddedDb(dir)
  dbs.push(edb)
  return edb
}

const tableSql = (edb: EmbeddedDb) => (edb.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'contacts'").get() as { sql: string }).sql
const indexColumns = (edb: EmbeddedDb, index: string) => (edb.db.prepare(`PRAGMA index_info(${index})`).all() as Array<{ name: string }>).map((c) => c.name)

describe('contact store (embedded): table layout', () => {
  it('a new file: a rowid table, the lookup indexes end with the id', async () => {
    const dir = tempDataDir()
    dirs.push(dir)
    const edb = open(dir.dir)
    createEmbeddedContactStore(edb)
    expect(tableSql(edb)).not.toMatch(/WITHOUT\s+ROWID/i)
    expect(indexColumns(edb, 'contacts_business_email')).toEqual(['account_id', 'business_email', 'id'])
    expect(indexColumns(edb, 'contacts_network_url')).toEqual(['account_id', 'network_url', 'id'])
  })

  it('a file of the WITHOUT ROWID layout is rewritten when the store opens: every contact kept, each lookup finds it, writes go on', async () => {
    const dir = tempDataDir()
    dirs.push(dir)
    const account = 'acc-layout'
    // the earlier layout, written by hand as that version did
    const old = new DatabaseSync(join(dir.dir, 'platform.db'))
    old.exec(`CREATE TABLE contacts (
      account_id TEXT NOT NULL, id TEXT NOT NULL, network_url TEXT, business_email TEXT, data TEXT NOT NULL,
      PRIMARY KEY (account_id, id)) WITHOUT ROWID;
      CREATE INDEX contacts_network_url ON contacts (account_id, network_url);
      CREATE INDEX contacts_business_email ON contacts (account_id, business_email);`)
    const insert = old.prepare('INSERT INTO contacts (account_id, id, network_url, business_email, data) VALUES (?, ?, ?, ?, ?)')
    const ids: string[] = []
    for (let i = 0; i < 3; i++) {
      const id = contactIdFor(account, 'crm', `old-${i}`)
      ids.push(id)
      const record = {
        id,
        account_id: account,
        external_id: `old-${i}`,
        business_email: `old${i}@example.com`,
        identity: { network_url: `https://net.example/${i}` },
      }
      insert.run(account, id, record.identity.network_url, record.business_email, JSON.stringify(record))
    }
    old.close()

    const edb = open(dir.dir)
    const store = createEmbeddedContactStore(edb)
    expect(tableSql(edb)).not.toMatch(/WITHOUT\s+ROWID/i)
    expect(indexColumns(edb, 'contacts_business_email')).toEqual(['account_id', 'business_email', 'id'])
    expect((await store.list(account, { limit: 10 })).map((c) => c.id)).toEqual([...ids].sort())
    for (let i = 0; i < 3; i++) {
      expect((await store.get(account, ids[i]!))?.external_id).toBe(`old-${i}`)
      expect((await store.findByBusinessEmail(account, `old${i}@example.com`))?.id).toBe(ids[i])
      expect((await store.findByNetworkUrl(account, `https://net.example/${i}`))?.id).toBe(ids[i])
    }
    // a second opening finds the rewritten table and leaves it as it is
    createEmbeddedContactStore(open(dir.dir))
    expect((await store.list(account, { limit: 10 })).length).toBe(3)
    const [outcome] = await store.upsertBatch(
      account,
      [{ source: 'crm', external_id: 'new-0', writer: 'manual', at: '2026-09-04T12:00:00.000Z', origin: 'm:0', patch: { identity: { first_name: 'New' } } }],
      mergeContact,
    )
    expect(outcome?.result).toBe('created')
    expect((await store.getByAnchor(account, 'crm', 'new-0'))?.identity.first_name).toBe('New')
  })
})

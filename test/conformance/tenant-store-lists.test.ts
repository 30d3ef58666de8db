import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Firestore } from '@google-cloud/firestore'
import { createHash, randomBytes } from 'node:crypto'
import { openEmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createFirestoreTenantStore } from '@lsv/shared/adapters/google/firestore-tenant-store.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import type { ApiKeyRecord, LocationRecord } from '@lsv/shared/model/records.ts'
import { randomSuffix, tempDataDir } from '../helpers/embedded.ts'

/**
 * The two listings the portal's Inbound connections screen reads (`listApiKeys`,
 * `listLocations`): an account's records only, revoked / removed ones included, oldest first,
 * on both adapters.
 */
function listingConformance(open: () => Promise<{ store: TenantStore; close(): Promise<void> }>): void {
  let h: { store: TenantStore; close(): Promise<void> }
  const accounts: string[] = []
  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    for (const a of accounts) await h.store.deleteAccountData(a)
    await h.close()
  })
  const hash = () => createHash('sha256').update(randomBytes(16)).digest('hex')
  const key = (account: string, seconds: number, revoked = false): ApiKeyRecord => ({
    id: `key_${randomSuffix()}`,
    account_id: account,
    connection_id: 'src_a',
    hash: hash(),
    prefix: 'lsk_abcdefgh',
    scopes: ['contacts:write'],
    name: null,
    expires_at: null,
    revoked_at: revoked ? new Date(Date.UTC(2026, 0, 2)).toISOString() : null,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString(),
  })
  const location = (account: string, id: string, seconds: number): LocationRecord => ({
    account_id: account,
    connection_id: 'src_p',
    location_id: id,
    token_hashes: [{ hash: hash(), expires_at: null }],
    active: true,
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString(),
    updated_at: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString(),
  })

  it("lists an account's API keys, revoked ones too, oldest first, and no other account's", async () => {
    const a = `acc-${randomSuffix()}`
    const b = `acc-${randomSuffix()}`
    accounts.push(a, b)
    const keys = [key(a, 3), key(a, 1, true), key(a, 2)]
    for (const k of [...keys, key(b, 0)]) await h.store.createApiKey(k)
    expect((await h.store.listApiKeys(a)).map((k) => k.id)).toEqual([keys[1]!.id, keys[2]!.id, keys[0]!.id])
    expect(await h.store.listApiKeys(`acc-${randomSuffix()}`)).toEqual([])
  })

  it("lists an account's locations, removed ones too, oldest first, and no other account's", async () => {
    const a = `acc-${randomSuffix()}`
    const b = `acc-${randomSuffix()}`
    accounts.push(a, b)
    for (const l of [location(a, 'two', 2), location(a, 'one', 1), location(b, 'one', 0)]) await h.store.putLocation(l)
    await h.store.updateLocation(a, 'two', { active: false, token_hashes: [] })
    const listed = await h.store.listLocations(a)
    expect(listed.map((l) => [l.location_id, l.active])).toEqual([
      ['one', true],
      ['two', false],
    ])
    expect(listed[0]).toMatchObject({ account_id: a, connection_id: 'src_p', created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, 1)).toISOString() })
    expect(listed[0]!.token_hashes).toHaveLength(1)
  })
}

describe('tenant store listings: embedded', () => {
  listingConformance(async () => {
    const dir = tempDataDir()
    const db = openEmbeddedDb(dir.dir)
    const store = createEmbeddedTenantStore(db)
    return {
      store,
      async close() {
        await store.close()
        db.close()
        dir.cleanup()
      },
    }
  })
})

describe.skipIf(!process.env.FIRESTORE_EMULATOR_HOST)('tenant store listings: Firestore emulator', () => {
  listingConformance(async () => {
    const firestore = new Firestore({ projectId: process.env.EMULATOR_PROJECT ?? 'demo-lsv-test' })
    const store = createFirestoreTenantStore(firestore)
    return {
      store,
      async close() {
        await store.close()
        await firestore.terminate()
      },
    }
  })
})

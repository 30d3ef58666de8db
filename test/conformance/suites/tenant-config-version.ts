import { afterAll, beforeAll, expect, it } from 'vitest'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import type { TenantConfigVersion } from '@lsv/shared/ports/tenant-lookups.ts'
import type { TwoInstances } from './two-instances.ts'
import { account, apiKey, connection, customField, integration, location } from './tenant-store.ts'
import { waitFor } from './wait.ts'

/** One instance: its tenant store, and a new version source reading what the store writes. */
export interface VersionedInstance {
  store: TenantStore
  /** a fresh source (nothing confirmed yet) with the given bound and clock (default: real time) */
  version(boundMs: number, now?: () => number): TenantConfigVersion
  close(): Promise<void>
}

/** The version as a read started now sees it: a new source, waited on until its first read returns. */
async function versionNow(instance: VersionedInstance): Promise<number> {
  const source = instance.version(60_000)
  return waitFor(() => source.confirmed() ?? undefined, 'a confirmed tenant configuration version', 10_000)
}

/**
 * What every TenantConfigVersion adapter must do (ports/tenant-lookups.ts): every write of the
 * tenant store, made on one instance, changes the version another instance reads afterwards; a
 * version is confirmed only within its bound. Call inside a `describe`.
 */
export function tenantConfigVersionConformance(open: () => Promise<TwoInstances<VersionedInstance>>): void {
  let two: TwoInstances<VersionedInstance>
  let store: TenantStore
  const created: string[] = []
  beforeAll(async () => {
    two = await open()
    store = two.store.store
  })
  afterAll(async () => {
    for (const id of created) await store.deleteAccountData(id).catch(() => {})
    await two.close()
  })

  /** a fresh account with one connection, key, location and integration */
  async function tenant() {
    const a = account()
    created.push(a.id)
    await store.createAccount(a)
    const c = connection(a.id)
    await store.createConnection(c)
    const k = apiKey(a.id, c.id)
    await store.createApiKey(k)
    const l = location(a.id, { connection_id: c.id })
    await store.putLocation(l)
    const i = integration(a.id)
    await store.createIntegration(i)
    return { a, c, k, l, i }
  }

  const WRITES: Array<[string, (t: Awaited<ReturnType<typeof tenant>>) => Promise<unknown>]> = [
    [
      'createAccount',
      async () => {
        const a = account()
        created.push(a.id)
        await store.createAccount(a)
      },
    ],
    ['updateAccount', (t) => store.updateAccount(t.a.id, { active: false })],
    ['createConnection', (t) => store.createConnection(connection(t.a.id))],
    ['updateConnection', (t) => store.updateConnection(t.c.id, { active: false })],
    ['createApiKey', (t) => store.createApiKey(apiKey(t.a.id, t.c.id))],
    ['updateApiKey', (t) => store.updateApiKey(t.k.id, { revoked_at: '2026-01-01T00:00:00.000Z' })],
    ['putLocation', (t) => store.putLocation(location(t.a.id))],
    ['updateLocation', (t) => store.updateLocation(t.a.id, t.l.location_id, { active: false })],
    ['createCustomField', (t) => store.createCustomField(customField(t.a.id))],
    ['createIntegration', (t) => store.createIntegration(integration(t.a.id))],
    ['updateIntegration', (t) => store.updateIntegration(t.i.id, { active: false })],
    ['deleteAccountData', (t) => store.deleteAccountData(t.a.id)],
  ]

  it.each(WRITES)('%s on one instance changes the version the other reads', async (_name, write) => {
    const t = await tenant()
    const before = await versionNow(two.other)
    await write(t)
    expect(await versionNow(two.other)).not.toBe(before)
  })

  it('a read changes nothing', async () => {
    const t = await tenant()
    const before = await versionNow(two.other)
    await store.getAccount(t.a.id)
    await store.getApiKeyByHash(t.k.hash)
    await store.listConnections(t.a.id)
    expect(await versionNow(two.other)).toBe(before)
  })

  it('answers only within its bound: past it, never the version read before', async () => {
    const t = await tenant()
    let now = 0
    const source = two.other.version(100, () => now)
    const first = await waitFor(() => source.confirmed() ?? undefined, 'a first confirmation', 10_000)
    now = 40
    expect(source.confirmed()).toBe(first) // within the bound: answered from memory
    await store.updateAccount(t.a.id, { name: 'changed' })
    now = 101
    // null while a read that starts now is under way (Firestore), or that read's answer (embedded)
    expect(source.confirmed()).not.toBe(first)
    expect(await waitFor(() => source.confirmed() ?? undefined, 'a confirmation after the bound', 10_000)).not.toBe(first)
  })
}

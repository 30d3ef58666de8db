/**
 * Issue 31 (paper audit, Cloud Armor's exemption of the push paths): `POST /v1/contacts/<random>`
 * and `/api/contacts/webhook/<random>` cost a store read each (two, with the inbound debugger's
 * look at a refused source). The lookup cache now keeps an unknown connection id's miss
 * (shared/src/adapters/tenant-lookup-cache.ts), without breaking read-your-writes: a connection
 * created through the instance after a miss is found by the next push.
 *
 * Over real HTTP, on the edge and the portal's deprecated fallback, with the tenant store counted
 * by a wrapping adapter under the production lookup cache and version.
 * Mutations: MISSES_KEPT empty → one read (or two) per push; the write not clearing the misses
 * (clear() without misses.clear()) → the created connection answers 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import { openEmbeddedDb, type EmbeddedDb } from '@lsv/shared/adapters/embedded/db.ts'
import { createEmbeddedTenantStore } from '@lsv/shared/adapters/embedded/tenant-store.ts'
import { createEmbeddedTenantConfigVersion } from '@lsv/shared/adapters/embedded/tenant-config-version.ts'
import { createTenantLookupCache } from '@lsv/shared/adapters/tenant-lookup-cache.ts'
import { hashSecret } from '@lsv/shared/domain/auth/hashing.ts'
import { getKeyPepper } from '@lsv/shared/domain/secrets/platform-secrets.ts'
import { buildApp as buildEdge } from '../../services/edge-ingest/src/app.ts'
import { buildApp as buildPortal } from '../../services/portal-api/src/app.ts'
import { createTestDeps } from '../helpers/deps.ts'
import { randomSuffix, tempDataDir } from '../helpers/embedded.ts'
import { createTestTenant, type StoredTenant } from '../helpers/tenant.ts'
import { connection } from '../conformance/suites/tenant-store.ts'
import { body, recordingQueue, record } from './support/harness.ts'

/** the store, counting `getConnection` reads per id */
function counted(store: TenantStore) {
  const reads = new Map<string, number>()
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown
      if (prop !== 'getConnection' || typeof value !== 'function') return value
      return (id: string) => {
        reads.set(id, (reads.get(id) ?? 0) + 1)
        return (value as (id: string) => Promise<unknown>).call(target, id)
      }
    },
  })
  return { proxy, readsOf: (id: string) => reads.get(id) ?? 0 }
}

/** a POST over loopback with its own Host header (fetch does not send one it is given) */
function post(port: number, path: string, headers: Record<string, string>, payload: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function listen(app: App): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

describe('pushes to an unknown source id (issue 31)', () => {
  const dir = tempDataDir()
  let db: EmbeddedDb
  let deps: Awaited<ReturnType<typeof createTestDeps>>
  let store: ReturnType<typeof counted>
  let t: StoredTenant
  let edge: App
  let portal: App
  let edgePort = 0
  let portalPort = 0

  beforeAll(async () => {
    db = openEmbeddedDb(dir.dir)
    store = counted(createEmbeddedTenantStore(db))
    // the production cache and version over the counted store, as platform/deps.ts builds them
    const cache = createTenantLookupCache(store.proxy, createEmbeddedTenantConfigVersion(db))
    deps = await createTestDeps({ queue: recordingQueue().queue, tenants: cache.tenants, tenantLookups: cache.lookups })
    t = await createTestTenant(deps)
    edge = await buildEdge(deps)
    portal = await buildPortal(deps)
    edgePort = await listen(edge)
    portalPort = await listen(portal)
  })
  afterAll(async () => {
    await t?.cleanup()
    await edge?.close()
    await portal?.close()
    await deps?.cleanup()
    await db?.close()
    dir.cleanup()
  })

  it('makes one store read for many pushes to one unknown id, on the edge and the portal fallback', async () => {
    const unknown = `con-${randomSuffix()}`
    const json = { 'content-type': 'application/json', 'x-webhook-token': 'whatever' }
    for (let i = 0; i < 20; i++) {
      expect(await post(edgePort, `/v1/contacts/${unknown}`, { ...json, host: t.host }, body([record(i)]))).toBe(401)
      expect(await post(portalPort, `/api/contacts/webhook/${unknown}`, { ...json, host: 'localhost' }, body([record(i)]))).toBe(401)
    }
    expect(store.readsOf(unknown)).toBe(1)
  })

  it('finds a connection created after a miss at the next push on the same instance', async () => {
    const id = `con-${randomSuffix()}`
    const token = `whsrc_${randomSuffix(16)}`
    const headers = { host: t.host, 'content-type': 'application/json', 'x-webhook-token': token }
    expect(await post(edgePort, `/v1/contacts/${id}`, headers, body([record(1)]))).toBe(401)
    expect(await post(edgePort, `/v1/contacts/${id}`, headers, body([record(1)]))).toBe(401)
    expect(store.readsOf(id)).toBe(1)
    // created through the instance's tenant store (what the management API and the portal call)
    const hash = hashSecret(await getKeyPepper(deps), token)
    await deps.tenants.createConnection(connection(t.accountId, { id, source: 'forms', field_mappings: [], token_hashes: [{ hash, expires_at: null }] }))
    expect(await post(edgePort, `/v1/contacts/${id}`, headers, body([record(2)]))).toBe(202)
  })
})

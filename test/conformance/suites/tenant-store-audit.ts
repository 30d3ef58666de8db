import { afterAll, beforeAll, expect, it } from 'vitest'
import type { AuditEntry, AuditLogStore } from '@lsv/shared/ports/audit-log.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import { auditEntryId } from '@lsv/shared/domain/audit/record.ts'
import { randomSuffix } from '../../helpers/embedded.ts'
import { account, apiKey, connection, customField, integration, location } from './tenant-store.ts'

/** A tenant store and the audit log over the same backend (one database file, one Firestore). */
export interface AuditedTenantStoreHarness {
  tenants: TenantStore
  auditLog: AuditLogStore
  close(): Promise<void>
}

/**
 * A change of tenant configuration and its audit entry commit together or not at all (issue 21
 * item 4; ports/tenant-store.ts, WriteOptions): every write that takes an entry stores both; a
 * write the store refuses stores neither; an entry that cannot be stored takes the change with it.
 * Call inside a `describe`.
 */
export function auditedTenantStoreConformance(open: () => Promise<AuditedTenantStoreHarness>): void {
  let h: AuditedTenantStoreHarness
  beforeAll(async () => {
    h = await open()
  })
  afterAll(async () => {
    await h.close()
  })

  const entryFor =
    (accountId: string, action: string, id = auditEntryId(Date.now())) =>
    (written: { updated_at?: string; created_at: string }): AuditEntry => ({
      id,
      account_id: accountId,
      at: new Date().toISOString(),
      actor: 'portal session 0123456789ab',
      action,
      target: { written_created_at: written.created_at },
      details: { written_updated_at: written.updated_at ?? null },
    })
  const actions = async (accountId: string) => (await h.auditLog.list(accountId, { limit: 50 })).data.map((e) => e.action).sort()
  const newAccount = async () => {
    const a = account()
    await h.tenants.createAccount(a)
    return a
  }

  it('every auditable write stores its entry with the change, built from the record as written', async () => {
    const a = account()
    const audit = (action: string) => ({ audit: entryFor(a.id, action) })
    await h.tenants.createAccount(a, audit('account.create'))
    const updated = await h.tenants.updateAccount(a.id, { name: 'Renamed', updated_at: '2026-02-02T00:00:00.000Z' }, audit('account.update'))
    expect(updated?.name).toBe('Renamed')
    const c = connection(a.id)
    await h.tenants.createConnection(c, audit('connection.create'))
    await h.tenants.updateConnection(c.id, { name: 'n' }, audit('connection.update'))
    const k = apiKey(a.id, c.id)
    await h.tenants.createApiKey(k, audit('api_key.create'))
    await h.tenants.updateApiKey(k.id, { revoked_at: '2026-03-03T00:00:00.000Z' }, audit('api_key.update'))
    const l = location(a.id)
    await h.tenants.putLocation(l, audit('location.put'))
    await h.tenants.updateLocation(a.id, l.location_id, { active: false }, audit('location.update'))
    await h.tenants.createCustomField(customField(a.id), audit('custom_field.create'))
    const i = integration(a.id)
    await h.tenants.createIntegration(i, audit('integration.create'))
    await h.tenants.updateIntegration(i.id, { active: false }, audit('integration.update'))
    await h.tenants.deleteIntegration(i.id, audit('integration.delete'))
    expect(await actions(a.id)).toEqual(
      [
        'account.create',
        'account.update',
        'connection.create',
        'connection.update',
        'api_key.create',
        'api_key.update',
        'location.put',
        'location.update',
        'custom_field.create',
        'integration.create',
        'integration.update',
        'integration.delete',
      ].sort(),
    )
    // the entry of an update is built from the patched record
    const entries = (await h.auditLog.list(a.id, { limit: 50 })).data
    expect(entries.find((e) => e.action === 'account.update')?.details).toEqual({ written_updated_at: '2026-02-02T00:00:00.000Z' })
    expect((await h.tenants.getApiKey(k.id))?.revoked_at).toBe('2026-03-03T00:00:00.000Z')
  })

  it('a write the store refuses (duplicate, missing record) stores no entry', async () => {
    const a = await newAccount()
    const c = connection(a.id)
    await h.tenants.createConnection(c)
    await expect(h.tenants.createConnection(c, { audit: entryFor(a.id, 'connection.create') })).rejects.toThrow(/duplicate/)
    await h.tenants.putLocation(location(a.id, { location_id: 'L1' }))
    await expect(h.tenants.putLocation(location(a.id, { location_id: 'L1' }), { audit: entryFor(a.id, 'location.put') })).rejects.toThrow(/duplicate/)
    const taken = await newAccount()
    await expect(h.tenants.updateAccount(a.id, { public_id: taken.public_id }, { audit: entryFor(a.id, 'account.update') })).rejects.toThrow(/duplicate/)
    expect(await h.tenants.updateConnection(`con-missing-${randomSuffix()}`, { name: 'x' }, { audit: entryFor(a.id, 'connection.update') })).toBeNull()
    expect(await actions(a.id)).toEqual([])
  })

  it('an entry that cannot be stored takes its change with it: create, update and a two-document write', async () => {
    // an entry id already taken makes the entry's write fail (ids are never reused or rewritten)
    // mutation: appending the entry after the change's transaction (or in a batch of its own)
    // leaves the change saved and fails these
    const a = await newAccount()
    const taken = auditEntryId(Date.now())
    await h.auditLog.append({ ...entryFor(a.id, 'first', taken)({ created_at: 'x' }) })
    const c = connection(a.id)
    await expect(h.tenants.createConnection(c, { audit: entryFor(a.id, 'connection.create', taken) })).rejects.toThrow()
    expect(await h.tenants.getConnection(c.id)).toBeNull()
    await h.tenants.createConnection(c)
    await expect(h.tenants.updateConnection(c.id, { name: 'changed' }, { audit: entryFor(a.id, 'connection.update', taken) })).rejects.toThrow()
    expect((await h.tenants.getConnection(c.id))?.name).toBeNull()
    const k = apiKey(a.id, c.id)
    await expect(h.tenants.createApiKey(k, { audit: entryFor(a.id, 'api_key.create', taken) })).rejects.toThrow()
    expect(await h.tenants.getApiKey(k.id)).toBeNull()
    expect(await h.tenants.getApiKeyByHash(k.hash)).toBeNull()
    expect(await actions(a.id)).toEqual(['first'])
  })

  it('an entry builder that throws takes the change with it', async () => {
    const a = await newAccount()
    const d = customField(a.id)
    const boom = () => {
      throw new Error('builder failed')
    }
    await expect(h.tenants.createCustomField(d, { audit: boom })).rejects.toThrow('builder failed')
    expect((await h.tenants.listCustomFields(a.id)).map((f) => f.key)).toEqual([])
    await expect(h.tenants.updateAccount(a.id, { name: 'never' }, { audit: boom })).rejects.toThrow('builder failed')
    expect((await h.tenants.getAccount(a.id))?.name).toBe('Acme')
  })
}

import { afterAll, beforeAll, expect, it } from 'vitest'
import type {
  AccountRecord,
  ApiKeyRecord,
  ConnectionRecord,
  CustomFieldDefinition,
  DeliveryRecord,
  IntegrationRecord,
  LocationRecord,
} from '@lsv/shared/model/records.ts'
import type { TenantStore } from '@lsv/shared/ports/tenant-store.ts'
import { DuplicateError } from '@lsv/shared/errors/duplicate-error.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** An adapter under test and how to release what it holds. */
export interface TenantStoreHarness {
  store: TenantStore
  close(): Promise<void>
}

const T0 = '2026-01-01T00:00:00.000Z'
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString()

export function account(overrides: Partial<AccountRecord> = {}): AccountRecord {
  const id = overrides.id ?? `acc-${randomSuffix()}`
  return {
    id,
    public_id: `p${randomSuffix()}`,
    name: 'Acme',
    active: true,
    api_access: true,
    permitted_tiers: [1, 2],
    authorized_domains: ['acme.example'],
    created_at: T0,
    updated_at: T0,
    ...overrides,
  }
}
export function connection(accountId: string, overrides: Partial<ConnectionRecord> = {}): ConnectionRecord {
  return {
    id: `con-${randomSuffix()}`,
    account_id: accountId,
    type: 'webhook',
    source: 'forms',
    name: null,
    active: true,
    field_mappings: [{ from: 'mail', to: 'email' }],
    token_hashes: [{ hash: 'h1', expires_at: null }],
    created_at: T0,
    updated_at: T0,
    ...overrides,
  }
}
export function apiKey(accountId: string, connectionId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: `key-${randomSuffix()}`,
    account_id: accountId,
    connection_id: connectionId,
    hash: `hash-${randomSuffix(16)}`,
    prefix: 'lsk_ab12',
    scopes: ['contacts:write'],
    name: null,
    expires_at: null,
    revoked_at: null,
    created_at: T0,
    ...overrides,
  }
}
export function location(accountId: string, overrides: Partial<LocationRecord> = {}): LocationRecord {
  return {
    account_id: accountId,
    connection_id: 'con-x',
    location_id: `loc/${randomSuffix()}`,
    token_hashes: [{ hash: 'lh', expires_at: null }],
    active: true,
    created_at: T0,
    updated_at: T0,
    ...overrides,
  }
}
export function customField(accountId: string, overrides: Partial<CustomFieldDefinition> = {}): CustomFieldDefinition {
  return { account_id: accountId, key: `k_${randomSuffix()}`, label: 'Label', type: 'text', created_at: T0, ...overrides }
}
export function integration(accountId: string, overrides: Partial<IntegrationRecord> = {}): IntegrationRecord {
  return {
    id: `int-${randomSuffix()}`,
    account_id: accountId,
    url: 'https://hooks.example/x',
    payload_version: 2,
    tiers: { contact_handles: true, sensitive_traits: false },
    active: true,
    disabled_reason: null,
    signing_secrets: [{ secret: 'whsec_AAAA', created_at: T0, expires_at: null }],
    created_at: T0,
    updated_at: T0,
    ...overrides,
  }
}
export function delivery(accountId: string, integrationId: string, overrides: Partial<DeliveryRecord> = {}): DeliveryRecord {
  const id = overrides.id ?? `del-${randomSuffix()}`
  return {
    id,
    account_id: accountId,
    integration_id: integrationId,
    event_id: `evt-${randomSuffix()}`,
    status: 'pending',
    attempts: [],
    body: '{"id":"x"}',
    next_attempt_at: null,
    created_at: T0,
    updated_at: T0,
    ...overrides,
  }
}

async function expectDuplicate(promise: Promise<unknown>, what: string): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(DuplicateError)
  expect((err as Error).message).toBe(`duplicate ${what}`)
}

/** The behaviour every TenantStore adapter must share. Call inside a `describe`. */
export function tenantStoreConformance(open: () => Promise<TenantStoreHarness>): void {
  let harness: TenantStoreHarness
  let store: TenantStore
  const created: string[] = []
  /** creates an account and remembers it for cleanup */
  const newAccount = async (overrides: Partial<AccountRecord> = {}) => {
    const a = account(overrides)
    created.push(a.id)
    await store.createAccount(a)
    return a
  }

  beforeAll(async () => {
    harness = await open()
    store = harness.store
  })
  afterAll(async () => {
    for (const id of created) await store.deleteAccountData(id)
    await harness.close()
  })

  it('creates accounts and finds them by id and by public id, case-insensitively', async () => {
    const a = await newAccount({ public_id: `Acme-${randomSuffix()}` })
    const stored = { ...a, public_id: a.public_id.toLowerCase() }
    expect(await store.getAccount(a.id)).toEqual(stored)
    expect(await store.getAccountByPublicId(a.public_id.toUpperCase())).toEqual(stored)
    expect(await store.getAccountByPublicId(a.public_id.toLowerCase())).toEqual(stored)
    expect(await store.getAccount(`missing-${randomSuffix()}`)).toBeNull()
    expect(await store.getAccountByPublicId(`missing-${randomSuffix()}`)).toBeNull()
  })

  it('rejects a taken public id, whatever its case', async () => {
    const a = await newAccount()
    const other = account({ public_id: a.public_id.toUpperCase() })
    created.push(other.id)
    await expectDuplicate(store.createAccount(other), 'public_id')
    expect(await store.getAccount(other.id)).toBeNull()
  })

  it('updates an account with patch semantics and moves its public id reservation', async () => {
    const a = await newAccount()
    const b = await newAccount()
    const updated = await store.updateAccount(a.id, { name: 'Renamed', authorized_domains: ['x.example'], updated_at: at(5) })
    const want = { ...a, name: 'Renamed', authorized_domains: ['x.example'], updated_at: at(5) }
    expect(updated).toEqual(want)
    expect(await store.getAccount(a.id)).toEqual(want)
    expect(await store.updateAccount(`missing-${randomSuffix()}`, { name: 'x' })).toBeNull()

    await expectDuplicate(store.updateAccount(a.id, { public_id: b.public_id.toUpperCase() }), 'public_id')
    expect((await store.getAccount(a.id))?.public_id).toBe(a.public_id)

    const newPublicId = `N${randomSuffix()}`
    expect((await store.updateAccount(a.id, { public_id: newPublicId }))?.public_id).toBe(newPublicId.toLowerCase())
    expect((await store.getAccountByPublicId(newPublicId))?.id).toBe(a.id)
    expect(await store.getAccountByPublicId(a.public_id)).toBeNull()
    // the old public id is free again
    await newAccount({ public_id: a.public_id })
    expect((await store.getAccountByPublicId(a.public_id))?.id).not.toBe(a.id)
  })

  it("keeps an account's alert settings as written, and a later patch replaces them whole (Settings, Alerts)", async () => {
    const a = await newAccount()
    const alerts = { email: 'ops@example.com', webhook: { url: 'https://hooks.example.com/alerts', signing_secret: 'whsec_c2VjcmV0', created_at: at(6) } }
    expect(await store.updateAccount(a.id, { alerts, updated_at: at(6) })).toEqual({ ...a, alerts, updated_at: at(6) })
    expect((await store.getAccount(a.id))?.alerts).toEqual(alerts)
    // another field's patch leaves them be; clearing them stores the nulls, not an absence
    await store.updateAccount(a.id, { name: 'Other' })
    expect((await store.getAccountByPublicId(a.public_id))?.alerts).toEqual(alerts)
    await store.updateAccount(a.id, { alerts: { email: null, webhook: null } })
    expect((await store.getAccount(a.id))?.alerts).toEqual({ email: null, webhook: null })
  })

  it('lists accounts as keyset pages ordered by id', async () => {
    const prefix = `acc-page-${randomSuffix()}`
    for (const s of ['c', 'a', 'b']) await newAccount({ id: `${prefix}-${s}` })
    const first = await store.listAccounts({ after: prefix, limit: 2 })
    expect(first.map((a) => a.id)).toEqual([`${prefix}-a`, `${prefix}-b`])
    const second = await store.listAccounts({ after: first[1]!.id, limit: 2 })
    expect(second[0]!.id).toBe(`${prefix}-c`)
    const all = await store.listAccounts({ limit: 1000 })
    const ids = all.map((a) => a.id)
    expect([...ids].sort()).toEqual(ids)
  })

  it('stores connections, finds one by id alone and lists them per account', async () => {
    const a = await newAccount()
    const b = await newAccount()
    const c2 = connection(a.id, { created_at: at(2), type: 'api' })
    const c1 = connection(a.id, { created_at: at(1) })
    const other = connection(b.id)
    for (const c of [c2, c1, other]) await store.createConnection(c)
    expect(await store.getConnection(c1.id)).toEqual(c1)
    expect(await store.listConnections(a.id)).toEqual([c1, c2])
    expect(await store.listConnections(b.id)).toEqual([other])

    const patched = await store.updateConnection(c1.id, { token_hashes: [{ hash: 'h2', expires_at: null }], active: false })
    expect(patched).toEqual({ ...c1, token_hashes: [{ hash: 'h2', expires_at: null }], active: false })
    expect(await store.getConnection(c1.id)).toEqual(patched)
    expect(await store.updateConnection(`missing-${randomSuffix()}`, { active: false })).toBeNull()
    expect(await store.getConnection(`missing-${randomSuffix()}`)).toBeNull()
  })

  it('stores api keys and finds them by hash, following updates', async () => {
    const a = await newAccount()
    const k = apiKey(a.id, 'con-1')
    await store.createApiKey(k)
    expect(await store.getApiKey(k.id)).toEqual(k)
    expect(await store.getApiKeyByHash(k.hash)).toEqual(k)
    expect(await store.getApiKeyByHash(`missing-${randomSuffix()}`)).toBeNull()

    const revoked = await store.updateApiKey(k.id, { revoked_at: at(9) })
    expect(revoked).toEqual({ ...k, revoked_at: at(9) })
    expect(await store.getApiKeyByHash(k.hash)).toEqual(revoked)

    const newHash = `hash-${randomSuffix(16)}`
    await store.updateApiKey(k.id, { hash: newHash })
    expect(await store.getApiKeyByHash(k.hash)).toBeNull()
    expect((await store.getApiKeyByHash(newHash))?.id).toBe(k.id)
    expect(await store.updateApiKey(`missing-${randomSuffix()}`, { name: 'x' })).toBeNull()
  })

  it('keeps one active location per (account, location id)', async () => {
    const a = await newAccount()
    const b = await newAccount()
    const l = location(a.id)
    await store.putLocation(l)
    expect(await store.getLocation(a.id, l.location_id)).toEqual(l)
    await expectDuplicate(store.putLocation({ ...l, connection_id: 'con-y' }), 'location')
    // the same location id under another account is another location
    await store.putLocation({ ...l, account_id: b.id })
    expect(await store.getLocation(b.id, l.location_id)).toEqual({ ...l, account_id: b.id })

    const inactive = await store.updateLocation(a.id, l.location_id, { active: false, updated_at: at(3) })
    expect(inactive).toEqual({ ...l, active: false, updated_at: at(3) })
    // an inactive location may be taken over
    const replacement = { ...l, connection_id: 'con-z', created_at: at(4), updated_at: at(4) }
    await store.putLocation(replacement)
    expect(await store.getLocation(a.id, l.location_id)).toEqual(replacement)
    expect(await store.getLocation(a.id, `missing-${randomSuffix()}`)).toBeNull()
    expect(await store.updateLocation(a.id, `missing-${randomSuffix()}`, { active: false })).toBeNull()
  })

  it('finds a location by one of its token hashes, within one account, following rotations', async () => {
    const a = await newAccount()
    const b = await newAccount()
    const current = `lh-${randomSuffix(16)}`
    const previous = `lh-${randomSuffix(16)}`
    const l = location(a.id, {
      token_hashes: [
        { hash: current, expires_at: null },
        { hash: previous, expires_at: at(9) },
      ],
    })
    await store.putLocation(l)
    await store.putLocation(location(a.id))
    expect(await store.findLocationByTokenHash(a.id, current)).toEqual(l)
    expect(await store.findLocationByTokenHash(a.id, previous)).toEqual(l)
    expect(await store.findLocationByTokenHash(b.id, current)).toBeNull()
    expect(await store.findLocationByTokenHash(a.id, `lh-${randomSuffix(16)}`)).toBeNull()
    // a rotation replaces the hashes: the old one no longer finds it, the new one does
    const rotated = `lh-${randomSuffix(16)}`
    await store.updateLocation(a.id, l.location_id, { token_hashes: [{ hash: rotated, expires_at: null }], updated_at: at(5) })
    expect(await store.findLocationByTokenHash(a.id, previous)).toBeNull()
    expect(await store.findLocationByTokenHash(a.id, rotated)).toEqual({ ...l, token_hashes: [{ hash: rotated, expires_at: null }], updated_at: at(5) })
    expect(await store.getLocation(a.id, l.location_id)).toEqual({ ...l, token_hashes: [{ hash: rotated, expires_at: null }], updated_at: at(5) })
  })

  it('keeps custom field keys unique per account', async () => {
    const a = await newAccount()
    const b = await newAccount()
    const f2 = customField(a.id, { created_at: at(2), type: 'number' })
    const f1 = customField(a.id, { created_at: at(1) })
    await store.createCustomField(f2)
    await store.createCustomField(f1)
    await expectDuplicate(store.createCustomField({ ...f1, label: 'Other' }), 'custom field')
    await store.createCustomField({ ...f1, account_id: b.id })
    expect(await store.listCustomFields(a.id)).toEqual([f1, f2])
    expect(await store.listCustomFields(b.id)).toEqual([{ ...f1, account_id: b.id }])
  })

  it('stores, updates and lists integrations', async () => {
    const a = await newAccount()
    const i1 = integration(a.id, { created_at: at(1) })
    const i2 = integration(a.id, { created_at: at(2), payload_version: 1 })
    await store.createIntegration(i2)
    await store.createIntegration(i1)
    expect(await store.getIntegration(i1.id)).toEqual(i1)
    expect(await store.listIntegrations(a.id)).toEqual([i1, i2])
    const disabled = await store.updateIntegration(i1.id, { active: false, disabled_reason: 'endpoint answered 410' })
    expect(disabled).toEqual({ ...i1, active: false, disabled_reason: 'endpoint answered 410' })
    expect(await store.getIntegration(i1.id)).toEqual(disabled)
    expect(await store.updateIntegration(`missing-${randomSuffix()}`, { active: false })).toBeNull()
    expect(await store.getIntegration(`missing-${randomSuffix()}`)).toBeNull()
    // delete: returns the record as it was, then it is gone from get and list (the other stays);
    // mutation: a delete that leaves the row, or removes every integration of the account
    expect(await store.deleteIntegration(i1.id)).toEqual(disabled)
    expect(await store.getIntegration(i1.id)).toBeNull()
    expect(await store.listIntegrations(a.id)).toEqual([i2])
    expect(await store.deleteIntegration(i1.id)).toBeNull()
  })

  it('deletes one account and everything under it, leaving other accounts intact', async () => {
    const populate = async () => {
      const acc = await newAccount()
      const con = connection(acc.id)
      const key = apiKey(acc.id, con.id)
      const loc = location(acc.id)
      const field = customField(acc.id)
      const integ = integration(acc.id)
      await store.createConnection(con)
      await store.createApiKey(key)
      await store.putLocation(loc)
      await store.createCustomField(field)
      await store.createIntegration(integ)
      return { acc, con, key, loc, field, integ }
    }
    const x = await populate()
    const y = await populate()
    await store.deleteAccountData(x.acc.id)

    expect(await store.getAccount(x.acc.id)).toBeNull()
    expect(await store.getAccountByPublicId(x.acc.public_id)).toBeNull()
    expect(await store.getConnection(x.con.id)).toBeNull()
    expect(await store.listConnections(x.acc.id)).toEqual([])
    expect(await store.getApiKey(x.key.id)).toBeNull()
    expect(await store.getApiKeyByHash(x.key.hash)).toBeNull()
    expect(await store.getLocation(x.acc.id, x.loc.location_id)).toBeNull()
    expect(await store.listCustomFields(x.acc.id)).toEqual([])
    expect(await store.getIntegration(x.integ.id)).toBeNull()
    expect(await store.listIntegrations(x.acc.id)).toEqual([])
    // the public id and the api key hash are free again
    await newAccount({ public_id: x.acc.public_id })
    const reused = apiKey(y.acc.id, y.con.id, { hash: x.key.hash })
    await store.createApiKey(reused)
    expect(await store.getApiKeyByHash(x.key.hash)).toEqual(reused)

    expect(await store.getAccount(y.acc.id)).toEqual(y.acc)
    expect(await store.listConnections(y.acc.id)).toEqual([y.con])
    expect(await store.getApiKeyByHash(y.key.hash)).toEqual(y.key)
    expect(await store.getLocation(y.acc.id, y.loc.location_id)).toEqual(y.loc)
    expect(await store.listCustomFields(y.acc.id)).toEqual([y.field])
    expect(await store.listIntegrations(y.acc.id)).toEqual([y.integ])
  })
}

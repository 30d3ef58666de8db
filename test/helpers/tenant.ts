/**
 * The one tenant harness of the tests (guide: "each test builds its own tenant with random ids
 * through one harness; tests share emulators safely"). A tenant is made from a TenantSpec in one
 * of two ways:
 * - `createTestTenant(deps, spec)`: records written straight into the tenant store (what the
 *   management API stores), with the key pepper of `deps`; the records come back too. For tests of
 *   what reads the stores (edge, worker, dispatcher, domain functions).
 * - `createTestTenant({ managementApi, deps? }, spec)`: through the management API with the
 *   operator token, each call checked for its exact status, the way the portal, the CLI and an
 *   operator do it. `managementApi` is anything shaped like fastify's `inject`: an app in
 *   process, or a running stack over HTTP (test/blackbox/client.ts `managementApp`), where no
 *   `deps` exist (then there is no `host` and no `cleanup`: the stack's data goes with it).
 * Public ids and every id are random, so tenants never collide on a shared emulator. The default
 * spec is a complete inbound tenant: example.com authorized, an api connection (source `crm`)
 * with one key, a webhook connection (source `hooks`) with its token and a partner CRM connection
 * with one location; no custom field, no integration. `cleanup()` removes the account's data from
 * every port that holds data by account (removeTenantData).
 */
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type {
  AccountRecord,
  ApiKeyRecord,
  ConnectionRecord,
  CustomFieldType,
  FieldMapping,
  IntegrationRecord,
  LocationRecord,
  Scope,
  Tier,
} from '@lsv/shared/model/records.ts'
import type { CreatedApiKey, CreatedConnection, CreatedIntegration, CreatedLocation } from '@lsv/shared/contract/admin.ts'
import { generateApiKey, generateSourceToken, hashSecret } from '@lsv/shared/domain/auth/hashing.ts'
import { getKeyPepper } from '@lsv/shared/domain/secrets/platform-secrets.ts'
import { generateSigningSecret } from '@lsv/shared/domain/webhooks/signing.ts'
import { newId, prefixedId } from '@lsv/shared/model/ids.ts'
import { randomSuffix } from './embedded.ts'
import { TEST_OPERATOR_TOKEN } from './test-secrets.ts'

interface KeySpec {
  /** default: `contacts:write` (the management API's default; through it, no scopes are sent) */
  scopes?: Scope[]
  name?: string | null
  expiresAt?: string | null
  /** store writes only: the management API has no such input (revoke the key through it) */
  revokedAt?: string | null
}

export interface TenantSpec {
  /** default: `t-` and 10 random hex digits */
  publicId?: string
  /** default: DEFAULT_TENANT_NAME; null: none */
  name?: string | null
  /** default: true */
  apiAccess?: boolean
  /** default: [1, 2, 3] */
  permittedTiers?: Tier[]
  /** default: ['example.com']; [] leaves the account without any */
  authorizedDomains?: string[]
  customFields?: Array<{ key: string; label?: string; type: CustomFieldType }>
  /** the api connection (default source `crm`) with its main key (`key`) and further keys by name (`keys`); false: none */
  api?: false | { source?: string; mappings?: FieldMapping[]; key?: KeySpec; keys?: Record<string, KeySpec> }
  /** a webhook connection (default source `hooks`) and its source token; false: none */
  webhook?: false | { source?: string; mappings?: FieldMapping[] }
  /** a partner CRM connection with one location (default id `loc-` and 8 random hex digits); false: none */
  partner?: false | { mappings?: FieldMapping[]; locationId?: string }
  /** an outbound integration (default payload version 2, tiers 2 and 3 off); absent: none */
  integration?: { url: string; payloadVersion?: 1 | 2; tiers?: IntegrationRecord['tiers'] }
}

/**
 * The key named `name` among a tenant's further keys (`spec.api.keys`); throws when the spec
 * issued none by that name, so a renamed key fails the test that uses it by name.
 */
export function issuedKey(tenant: { keys: Record<string, IssuedKey> }, name: string): string {
  const issued = tenant.keys[name]
  if (!issued) throw new Error(`the test tenant has no key named ${name} (keys: ${Object.keys(tenant.keys).join(', ')})`)
  return issued.key
}

/** A bare account: no name, domains, connections or keys (spread it and add what the test needs). */
export const ACCOUNT_ONLY: TenantSpec = { name: null, authorizedDomains: [], api: false, webhook: false, partner: false }
const DEFAULT_TENANT_NAME = 'test tenant'

interface IssuedKey {
  id: string
  /** the key itself (`lsk_…`) */
  key: string
}

/**
 * Ids and credentials, however the tenant was made. A part the spec left out throws when read
 * (a test cannot silently send `Bearer undefined`).
 */
export interface TenantIds {
  accountId: string
  publicId: string
  apiConnectionId: string
  apiSource: string
  /** the api connection's main key */
  key: string
  keyId: string
  /** the further keys of `spec.api.keys`, by name */
  keys: Record<string, IssuedKey>
  webhookConnectionId: string
  sourceToken: string
  partnerConnectionId: string
  locationId: string
  locationToken: string
  integrationId: string
  signingSecret: string
}

/** A tenant made with the deps of the stack that serves it. */
interface TestTenant extends TenantIds {
  /** Host header of edge requests: `<public_id>.<edgeDomain>` */
  host: string
  /** headers of a valid POST /v1/contacts with the main key */
  keyHeaders(extra?: Record<string, string>): Record<string, string>
  /** removes the account's data from every port (removeTenantData) */
  cleanup(): Promise<void>
}

/** Made by store writes: the records as written. */
export interface StoredTenant extends TestTenant {
  account: AccountRecord
  api: ConnectionRecord
  keyRecord: ApiKeyRecord
  webhook: ConnectionRecord
  partner: ConnectionRecord
  integration: IntegrationRecord
}

/** Made through the management API: what only its answers tell. */
export interface ManagedTenantIds extends TenantIds {
  /** the webhook connection's `webhook_url` as the management API answered it */
  webhookUrl: string
}

export type ManagedTenant = ManagedTenantIds & TestTenant

/** fastify's `inject` as far as the harness uses it (an app, or test/blackbox/client.ts over HTTP) */
interface ManagementApi {
  inject(opts: {
    method: 'POST' | 'PUT'
    url: string
    headers: Record<string, string>
    payload: object
  }): Promise<{ statusCode: number; body: string; json(): any }>
}

export interface ThroughManagementApi {
  managementApi: ManagementApi
  /** the deps of the stack (host, cleanup); absent for a stack in another process */
  deps?: PlatformDeps
  /** default: the operator token of `deps`, else the tests' one */
  operatorToken?: string
}

/**
 * Removes every record of the account from each port that holds data by account: contacts,
 * delivery log, link tokens, portal links and sessions, and last the tenant configuration itself.
 * (The audit log is append-only and idempotency claims are not per account: neither has a delete.)
 */
export async function removeTenantData(deps: PlatformDeps, accountId: string): Promise<void> {
  await deps.contacts.deleteAccountData(accountId)
  await deps.deliveries.deleteAccountData(accountId)
  await deps.linkTokens.deleteAccountData(accountId)
  await deps.portalAccess.deleteAccountData(accountId)
  await deps.tenants.deleteAccountData(accountId)
}

export function createTestTenant(deps: PlatformDeps, spec?: TenantSpec): Promise<StoredTenant>
export function createTestTenant(via: ThroughManagementApi & { deps: PlatformDeps }, spec?: TenantSpec): Promise<ManagedTenant>
export function createTestTenant(via: ThroughManagementApi, spec?: TenantSpec): Promise<ManagedTenantIds>
export function createTestTenant(target: PlatformDeps | ThroughManagementApi, spec: TenantSpec = {}): Promise<TenantIds> {
  return 'managementApi' in target ? throughManagementApi(target, spec) : throughStore(target, spec)
}

const publicIdOf = (spec: TenantSpec) => spec.publicId ?? `t-${randomSuffix(5)}`
const locationIdOf = (partner: { locationId?: string }) => partner.locationId ?? `loc-${randomSuffix(4)}`
const DEFAULT_SCOPES: Scope[] = ['contacts:write']

async function throughStore(deps: PlatformDeps, spec: TenantSpec): Promise<StoredTenant> {
  const now = new Date(deps.clock.now()).toISOString()
  const publicId = publicIdOf(spec)
  const account: AccountRecord = {
    id: newId(),
    public_id: publicId,
    name: spec.name === undefined ? DEFAULT_TENANT_NAME : spec.name,
    active: true,
    api_access: spec.apiAccess ?? true,
    permitted_tiers: spec.permittedTiers ?? [1, 2, 3],
    authorized_domains: spec.authorizedDomains ?? ['example.com'],
    created_at: now,
    updated_at: now,
  }
  await deps.tenants.createAccount(account)
  const parts: Partial<StoredTenant> = { account, keys: {} }
  // the pepper is read only when something is hashed (deps without secrets can still make bare accounts)
  let pepper: string | undefined
  const hash = async (secret: string) => hashSecret((pepper ??= await getKeyPepper(deps)), secret)
  const connection = (type: ConnectionRecord['type'], source: string, mappings: FieldMapping[] = [], tokenHashes: string[] = []): ConnectionRecord => ({
    id: prefixedId(type === 'webhook' ? 'src' : 'con'),
    account_id: account.id,
    type,
    source,
    name: null,
    active: true,
    field_mappings: mappings,
    token_hashes: tokenHashes.map((h) => ({ hash: h, expires_at: null })),
    created_at: now,
    updated_at: now,
  })
  const apiKey = async (connectionId: string, spec: KeySpec = {}): Promise<{ key: string; record: ApiKeyRecord }> => {
    const key = generateApiKey()
    const record: ApiKeyRecord = {
      id: prefixedId('key'),
      account_id: account.id,
      connection_id: connectionId,
      hash: await hash(key),
      prefix: key.slice(0, 8),
      scopes: spec.scopes ?? DEFAULT_SCOPES,
      name: spec.name ?? null,
      expires_at: spec.expiresAt ?? null,
      revoked_at: spec.revokedAt ?? null,
      created_at: now,
    }
    await deps.tenants.createApiKey(record)
    return { key, record }
  }

  if (spec.api !== false) {
    const api = connection('api', spec.api?.source ?? 'crm', spec.api?.mappings)
    await deps.tenants.createConnection(api)
    const main = await apiKey(api.id, spec.api?.key)
    Object.assign(parts, { api, apiConnectionId: api.id, apiSource: api.source, key: main.key, keyId: main.record.id, keyRecord: main.record })
    for (const [name, keySpec] of Object.entries(spec.api?.keys ?? {})) {
      const extra = await apiKey(api.id, keySpec)
      parts.keys![name] = { id: extra.record.id, key: extra.key }
    }
  }
  if (spec.webhook !== false) {
    const sourceToken = generateSourceToken()
    const webhook = connection('webhook', spec.webhook?.source ?? 'hooks', spec.webhook?.mappings, [await hash(sourceToken)])
    await deps.tenants.createConnection(webhook)
    Object.assign(parts, { webhook, webhookConnectionId: webhook.id, sourceToken })
  }
  if (spec.partner !== false) {
    const partner = connection('partnercrm', 'partnercrm', spec.partner?.mappings)
    await deps.tenants.createConnection(partner)
    const locationId = locationIdOf(spec.partner ?? {})
    const locationToken = generateSourceToken()
    const location: LocationRecord = {
      account_id: account.id,
      connection_id: partner.id,
      location_id: locationId,
      token_hashes: [{ hash: await hash(locationToken), expires_at: null }],
      active: true,
      created_at: now,
      updated_at: now,
    }
    await deps.tenants.putLocation(location)
    Object.assign(parts, { partner, partnerConnectionId: partner.id, locationId, locationToken })
  }
  for (const f of spec.customFields ?? []) {
    await deps.tenants.createCustomField({ account_id: account.id, key: f.key, label: f.label ?? f.key, type: f.type, created_at: now })
  }
  if (spec.integration) {
    const signingSecret = generateSigningSecret()
    const integration: IntegrationRecord = {
      id: `int_${randomSuffix(9)}`,
      account_id: account.id,
      url: spec.integration.url,
      payload_version: spec.integration.payloadVersion ?? 2,
      tiers: spec.integration.tiers ?? { contact_handles: false, sensitive_traits: false },
      active: true,
      disabled_reason: null,
      signing_secrets: [{ secret: signingSecret, created_at: now, expires_at: null }],
      created_at: now,
      updated_at: now,
    }
    await deps.tenants.createIntegration(integration)
    Object.assign(parts, { integration, integrationId: integration.id, signingSecret })
  }
  return finish(parts, 'store', account.id, publicId, deps) as StoredTenant
}

async function throughManagementApi(via: ThroughManagementApi, spec: TenantSpec): Promise<ManagedTenantIds> {
  const token = via.operatorToken ?? via.deps?.config.operatorToken ?? TEST_OPERATOR_TOKEN
  const call = async <T>(status: number, method: 'POST' | 'PUT', url: string, payload: object): Promise<T> => {
    const res = await via.managementApi.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload })
    if (res.statusCode !== status) throw new Error(`${method} ${url} -> ${res.statusCode} (expected ${status}) ${res.body}`)
    return res.json() as T
  }
  const publicId = publicIdOf(spec)
  const name = spec.name === undefined ? DEFAULT_TENANT_NAME : spec.name
  const account = await call<{ id: string }>(201, 'POST', '/api/v1/admin/accounts', {
    public_id: publicId,
    ...(name === null ? {} : { name }),
    ...(spec.apiAccess === undefined ? {} : { api_access: spec.apiAccess }),
    ...(spec.permittedTiers === undefined ? {} : { permitted_tiers: spec.permittedTiers }),
  })
  const base = `/api/v1/admin/accounts/${account.id}`
  const parts: Partial<ManagedTenantIds> = { keys: {} }
  const domains = spec.authorizedDomains ?? ['example.com']
  if (domains.length > 0) await call(200, 'PUT', `${base}/authorized-domains`, { domains })
  for (const f of spec.customFields ?? []) {
    await call(201, 'POST', `${base}/custom-fields`, { key: f.key, label: f.label ?? f.key, type: f.type })
  }
  const mappings = (m: FieldMapping[] | undefined) => (m === undefined ? {} : { field_mappings: m })
  const apiKey = (connectionId: string, key: KeySpec = {}) => {
    if (key.revokedAt !== undefined) throw new Error('KeySpec.revokedAt: the management API creates no revoked key (revoke it through the API)')
    return call<CreatedApiKey>(201, 'POST', `${base}/connections/${connectionId}/keys`, {
      ...(key.scopes === undefined ? {} : { scopes: key.scopes }),
      ...(key.name == null ? {} : { name: key.name }),
      ...(key.expiresAt === undefined ? {} : { expires_at: key.expiresAt }),
    })
  }
  if (spec.api !== false) {
    const api = await call<CreatedConnection>(201, 'POST', `${base}/connections`, {
      type: 'api',
      source: spec.api?.source ?? 'crm',
      ...mappings(spec.api?.mappings),
    })
    const main = await apiKey(api.id, spec.api?.key)
    Object.assign(parts, { apiConnectionId: api.id, apiSource: api.source, key: main.key, keyId: main.id })
    for (const [keyName, keySpec] of Object.entries(spec.api?.keys ?? {})) {
      const extra = await apiKey(api.id, keySpec)
      parts.keys![keyName] = { id: extra.id, key: extra.key }
    }
  }
  if (spec.webhook !== false) {
    const webhook = await call<CreatedConnection>(201, 'POST', `${base}/connections`, {
      type: 'webhook',
      source: spec.webhook?.source ?? 'hooks',
      ...mappings(spec.webhook?.mappings),
    })
    Object.assign(parts, { webhookConnectionId: webhook.id, sourceToken: webhook.token, webhookUrl: webhook.webhook_url })
  }
  if (spec.partner !== false) {
    const partner = await call<CreatedConnection>(201, 'POST', `${base}/connections`, { type: 'partnercrm', ...mappings(spec.partner?.mappings) })
    const locationId = locationIdOf(spec.partner ?? {})
    const location = await call<CreatedLocation>(201, 'POST', `${base}/connections/${partner.id}/locations`, { location_id: locationId })
    Object.assign(parts, { partnerConnectionId: partner.id, locationId, locationToken: location.token })
  }
  if (spec.integration) {
    const integration = await call<CreatedIntegration>(201, 'POST', `${base}/integrations`, {
      url: spec.integration.url,
      payload_version: spec.integration.payloadVersion ?? 2,
      ...(spec.integration.tiers ? { tiers: spec.integration.tiers } : {}),
    })
    Object.assign(parts, { integrationId: integration.id, signingSecret: integration.signing_secret })
  }
  return finish(parts, 'managementApi', account.id, publicId, via.deps) as ManagedTenantIds
}

/** The members each part of a spec adds, by how the tenant is made (for the getters of absent parts). */
const PARTS = {
  store: {
    api: ['api', 'apiConnectionId', 'apiSource', 'key', 'keyId', 'keyRecord'],
    webhook: ['webhook', 'webhookConnectionId', 'sourceToken'],
    partner: ['partner', 'partnerConnectionId', 'locationId', 'locationToken'],
    integration: ['integration', 'integrationId', 'signingSecret'],
  },
  managementApi: {
    api: ['apiConnectionId', 'apiSource', 'key', 'keyId'],
    webhook: ['webhookConnectionId', 'sourceToken', 'webhookUrl'],
    partner: ['partnerConnectionId', 'locationId', 'locationToken'],
    integration: ['integrationId', 'signingSecret'],
  },
}

/**
 * Adds the account's ids, the host and cleanup (when the deps are known) and, for each part the
 * spec left out, getters that throw. The getters are not enumerable, so `{ ...tenant }` still works.
 */
function finish<T extends object>(parts: T, made: keyof typeof PARTS, accountId: string, publicId: string, deps: PlatformDeps | undefined): T {
  const tenant = Object.assign(parts, { accountId, publicId }) as T & Partial<TestTenant>
  if (deps) {
    const host = `${publicId}.${deps.config.edgeDomain}`
    Object.assign(tenant, {
      host,
      keyHeaders: (extra: Record<string, string> = {}) => ({ host, authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', ...extra }),
      cleanup: () => removeTenantData(deps, accountId),
    })
  }
  for (const [part, members] of Object.entries(PARTS[made])) {
    for (const member of members) {
      if (member in tenant) continue
      Object.defineProperty(tenant, member, {
        enumerable: false,
        get() {
          throw new Error(`this test tenant has no ${part} part (${member}): ask for it in its TenantSpec`)
        },
      })
    }
  }
  return tenant
}

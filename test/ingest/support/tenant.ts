import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type {
  AccountRecord, ApiKeyRecord, ConnectionRecord, CustomFieldType, FieldMapping, LocationRecord, Scope,
} from '@lsv/shared/model/records.ts'
import { hashSecret, generateApiKey, generateSourceToken } from '@lsv/shared/domain/auth/hashing.ts'
import { newId, prefixedId } from '@lsv/shared/model/ids.ts'
import { randomSuffix } from '../../helpers/embedded.ts'

/** the test pepper of createTestDeps (KEY_PEPPER) */
export const TEST_PEPPER = 'test-key-pepper'

export interface IngestTenant {
  account: AccountRecord
  publicId: string
  /** Host header of edge requests */
  host: string
  api: ConnectionRecord
  key: string
  keyRecord: ApiKeyRecord
  webhook: ConnectionRecord
  sourceToken: string
  partner: ConnectionRecord
  locationId: string
  locationToken: string
  /** headers of a valid POST /v1/contacts */
  keyHeaders(extra?: Record<string, string>): Record<string, string>
  cleanup(): Promise<void>
}

export interface IngestTenantOptions {
  apiMappings?: FieldMapping[]
  webhookMappings?: FieldMapping[]
  partnerMappings?: FieldMapping[]
  customFields?: Array<{ key: string; label?: string; type: CustomFieldType }>
  scopes?: Scope[]
  apiAccess?: boolean
}

/**
 * A tenant written straight into the tenant store (what the management API stores): an account,
 * an api connection with one key, a webhook connection with its token, and a partner CRM
 * connection with one location. Ids are random, so tests sharing an emulator never collide.
 */
export async function createIngestTenant(deps: PlatformDeps, options: IngestTenantOptions = {}): Promise<IngestTenant> {
  const now = new Date(deps.clock.now()).toISOString()
  const publicId = `ing-${randomSuffix(5)}`
  const account: AccountRecord = {
    id: newId(), public_id: publicId, name: 'ingest test', active: true, api_access: options.apiAccess ?? true,
    permitted_tiers: [1, 2, 3], authorized_domains: ['example.com'], created_at: now, updated_at: now,
  }
  await deps.tenants.createAccount(account)
  const connection = (type: ConnectionRecord['type'], source: string, mappings: FieldMapping[] = [], tokenHashes: string[] = []): ConnectionRecord => ({
    id: prefixedId(type === 'webhook' ? 'src' : 'con'), account_id: account.id, type, source, name: null, active: true,
    field_mappings: mappings, token_hashes: tokenHashes.map((hash) => ({ hash, expires_at: null })), created_at: now, updated_at: now,
  })
  const api = connection('api', 'crm', options.apiMappings)
  const sourceToken = generateSourceToken()
  const webhook = connection('webhook', 'hooks', options.webhookMappings, [hashSecret(TEST_PEPPER, sourceToken)])
  const partner = connection('partnercrm', 'partnercrm', options.partnerMappings)
  for (const c of [api, webhook, partner]) await deps.tenants.createConnection(c)
  const key = generateApiKey()
  const keyRecord: ApiKeyRecord = {
    id: prefixedId('key'), account_id: account.id, connection_id: api.id, hash: hashSecret(TEST_PEPPER, key),
    prefix: key.slice(0, 8), scopes: options.scopes ?? ['contacts:write'], name: null, expires_at: null, revoked_at: null, created_at: now,
  }
  await deps.tenants.createApiKey(keyRecord)
  const locationId = `loc-${randomSuffix(4)}`
  const locationToken = generateSourceToken()
  const location: LocationRecord = {
    account_id: account.id, connection_id: partner.id, location_id: locationId,
    token_hashes: [{ hash: hashSecret(TEST_PEPPER, locationToken), expires_at: null }], active: true, created_at: now, updated_at: now,
  }
  await deps.tenants.putLocation(location)
  for (const f of options.customFields ?? []) {
    await deps.tenants.createCustomField({ account_id: account.id, key: f.key, label: f.label ?? f.key, type: f.type, created_at: now })
  }
  const host = `${publicId}.${deps.config.edgeDomain}`
  return {
    account, publicId, host, api, key, keyRecord, webhook, sourceToken, partner, locationId, locationToken,
    keyHeaders: (extra = {}) => ({ host, authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra }),
    async cleanup() {
      await deps.contacts.deleteAccountData(account.id)
      await deps.tenants.deleteAccountData(account.id)
    },
  }
}

/** A valid inbound record with a unique external id. */
export function record(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { external_id: `ext-${i}`, email: `Person${i}@Example.com`, first_name: `First${i}`, last_name: `Last${i}`, ...extra }
}

import type { AuditEntry } from './audit-log.ts'
import type { AccountRecord, ApiKeyRecord, ConnectionRecord, CustomFieldDefinition, IntegrationRecord, LocationRecord } from '../model/records.ts'

export type Patch<T> = Partial<Omit<T, 'id' | 'account_id' | 'created_at'>>

/**
 * What a write commits with the change. `audit` builds the change's audit entry from the record
 * as written (for an update, the patched record); the store writes it in the same transaction or
 * batch as the change, so the two commit together or not at all (issue 21 item 4). It is called
 * inside the transaction, possibly more than once when the store retries one, and must not throw
 * (domain/audit/record.ts builds entries that way).
 */
export interface WriteOptions<T> {
  audit?: (written: T) => AuditEntry
}

/**
 * Tenant configuration: accounts, inbound connections and their credentials (API keys, partner
 * CRM locations), custom field definitions and outbound integrations. Ids are globally unique.
 * The delivery log (DeliveryLog) and idempotency claims (IdempotencyClaims) are ports of their own.
 */
export interface TenantStore {
  /** throws DuplicateError('public_id') when the public id is taken */
  createAccount(account: AccountRecord, options?: WriteOptions<AccountRecord>): Promise<void>
  getAccount(id: string): Promise<AccountRecord | null>
  getAccountByPublicId(publicId: string): Promise<AccountRecord | null>
  updateAccount(id: string, patch: Patch<AccountRecord>, options?: WriteOptions<AccountRecord>): Promise<AccountRecord | null>
  /** keyset page of all accounts ordered by id */
  listAccounts(options: { after?: string; limit: number }): Promise<AccountRecord[]>

  createConnection(connection: ConnectionRecord, options?: WriteOptions<ConnectionRecord>): Promise<void>
  getConnection(id: string): Promise<ConnectionRecord | null>
  updateConnection(id: string, patch: Patch<ConnectionRecord>, options?: WriteOptions<ConnectionRecord>): Promise<ConnectionRecord | null>
  listConnections(accountId: string): Promise<ConnectionRecord[]>

  createApiKey(key: ApiKeyRecord, options?: WriteOptions<ApiKeyRecord>): Promise<void>
  getApiKey(id: string): Promise<ApiKeyRecord | null>
  getApiKeyByHash(hash: string): Promise<ApiKeyRecord | null>
  updateApiKey(id: string, patch: Patch<ApiKeyRecord>, options?: WriteOptions<ApiKeyRecord>): Promise<ApiKeyRecord | null>
  /** the account's keys (every connection, revoked ones too), oldest first (the portal lists them) */
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>

  /** throws DuplicateError('location') when (account, location_id) exists and is active */
  putLocation(location: LocationRecord, options?: WriteOptions<LocationRecord>): Promise<void>
  getLocation(accountId: string, locationId: string): Promise<LocationRecord | null>
  updateLocation(accountId: string, locationId: string, patch: Patch<LocationRecord>, options?: WriteOptions<LocationRecord>): Promise<LocationRecord | null>
  /** the account's partner CRM locations, removed ones too, oldest first (the portal lists them) */
  listLocations(accountId: string): Promise<LocationRecord[]>
  /**
   * The location of `accountId` one of whose token hashes (current or in a rotation grace, expired
   * or not: the caller checks validity) is `hash`; null when none. Lets the edge identify a
   * partner CRM caller from its token before reading the body that names the location.
   */
  findLocationByTokenHash(accountId: string, hash: string): Promise<LocationRecord | null>

  /** throws DuplicateError('custom field') when the key exists for the account */
  createCustomField(definition: CustomFieldDefinition, options?: WriteOptions<CustomFieldDefinition>): Promise<void>
  listCustomFields(accountId: string): Promise<CustomFieldDefinition[]>

  createIntegration(integration: IntegrationRecord, options?: WriteOptions<IntegrationRecord>): Promise<void>
  getIntegration(id: string): Promise<IntegrationRecord | null>
  updateIntegration(id: string, patch: Patch<IntegrationRecord>, options?: WriteOptions<IntegrationRecord>): Promise<IntegrationRecord | null>
  listIntegrations(accountId: string): Promise<IntegrationRecord[]>
  /** removes the integration; returns it as it was, null when there was none (the audit entry is built from it) */
  deleteIntegration(id: string, options?: WriteOptions<IntegrationRecord>): Promise<IntegrationRecord | null>

  /** removes the account and everything under it (tests) */
  deleteAccountData(accountId: string): Promise<void>
  close(): Promise<void>
}

/**
 * The port's methods in the groups both adapters implement them in (one function per record
 * kind in each adapter), named once here so the two adapters cannot group them differently.
 */
export type TenantAccountMethods = Pick<
  TenantStore,
  'createAccount' | 'getAccount' | 'getAccountByPublicId' | 'updateAccount' | 'listAccounts' | 'deleteAccountData'
>
export type TenantApiKeyMethods = Pick<TenantStore, 'createApiKey' | 'getApiKey' | 'getApiKeyByHash' | 'updateApiKey' | 'listApiKeys'>
export type TenantLocationMethods = Pick<TenantStore, 'putLocation' | 'getLocation' | 'findLocationByTokenHash' | 'updateLocation' | 'listLocations'>
/** connections, custom field definitions and integrations: records under their own id */
export type TenantRecordMethods = Pick<
  TenantStore,
  | 'createConnection'
  | 'getConnection'
  | 'updateConnection'
  | 'listConnections'
  | 'createCustomField'
  | 'listCustomFields'
  | 'createIntegration'
  | 'getIntegration'
  | 'updateIntegration'
  | 'listIntegrations'
  | 'deleteIntegration'
>

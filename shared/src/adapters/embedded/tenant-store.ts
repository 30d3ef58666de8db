import type { EmbeddedDb } from './db.ts'
import type { AccountRecord, ApiKeyRecord, ConnectionRecord, CustomFieldDefinition, IntegrationRecord, LocationRecord } from '../../model/records.ts'
import type {
  Patch,
  TenantStore,
  WriteOptions,
  TenantAccountMethods,
  TenantApiKeyMethods,
  TenantLocationMethods,
  TenantRecordMethods,
} from '../../ports/tenant-store.ts'
import { auditAppender } from './audit-log.ts'
import { DuplicateError } from '../../errors/duplicate-error.ts'
import { applyPatch, normalizePublicId } from '../tenant-patch.ts'
import { jsonStatements } from './statements.ts'

/**
 * Each table keeps the record as JSON in `data`, plus the columns its lookups, orderings and unique
 * constraints need. Every write that checks a constraint runs in one BEGIN IMMEDIATE transaction,
 * so two processes sharing the file cannot both pass the check; a write given an audit entry
 * (WriteOptions) appends it to `audit_log` (audit-log.ts) in that same transaction.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS tenant_accounts (
  id TEXT PRIMARY KEY, public_id TEXT NOT NULL UNIQUE, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tenant_connections (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_connections_account ON tenant_connections (account_id, created_at, id);
CREATE TABLE IF NOT EXISTS tenant_api_keys (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_api_keys_account ON tenant_api_keys (account_id);
CREATE TABLE IF NOT EXISTS tenant_locations (
  account_id TEXT NOT NULL, location_id TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (account_id, location_id));
CREATE TABLE IF NOT EXISTS tenant_custom_fields (
  account_id TEXT NOT NULL, key TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (account_id, key));
CREATE TABLE IF NOT EXISTS tenant_integrations (
  id TEXT PRIMARY KEY, account_id TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tenant_integrations_account ON tenant_integrations (account_id, created_at, id);
`

/**
 * The tenant configuration's version (ports/tenant-lookups.ts, TenantConfigVersion): one row that
 * every insert, update and delete of a tenant table bumps in the same transaction, by trigger, so
 * no write (of this store, of another process on the file, of a future method) can miss it.
 * Read by tenant-config-version.ts.
 */
export const TENANT_CONFIG_VERSION_TABLE = 'tenant_config_version'
const VERSIONED_TABLES = [
  'tenant_accounts',
  'tenant_connections',
  'tenant_api_keys',
  'tenant_locations',
  'tenant_custom_fields',
  'tenant_integrations',
] as const
const VERSION_SCHEMA = `
CREATE TABLE IF NOT EXISTS ${TENANT_CONFIG_VERSION_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
${VERSIONED_TABLES.flatMap((table) =>
  ['INSERT', 'UPDATE', 'DELETE'].map(
    (event) => `
CREATE TRIGGER IF NOT EXISTS ${table}_${event.toLowerCase()}_bumps_version AFTER ${event} ON ${table} BEGIN
  INSERT INTO ${TENANT_CONFIG_VERSION_TABLE} (id, version) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET version = version + 1;
END;`,
  ),
).join('')}
`

const ACCOUNT_TABLES = ['tenant_connections', 'tenant_api_keys', 'tenant_locations', 'tenant_custom_fields', 'tenant_integrations', 'tenant_accounts'] as const

/** the statements, transaction and audit step every group of methods shares */
function tenantTables(edb: EmbeddedDb) {
  const { one, many, run } = jsonStatements(edb.db)
  const appendAudit = auditAppender(edb)
  /** the change's audit entry, inside the change's transaction (ports/tenant-store.ts, WriteOptions) */
  const audited = <T>(written: T, options: WriteOptions<T> | undefined): void => {
    if (options?.audit) appendAudit(options.audit(written))
  }

  /** read-modify-write of a record stored by id; `write` persists the patched record */
  const update = <T extends object>(
    table: string,
    id: string,
    patch: object,
    options: WriteOptions<T> | undefined,
    write?: (next: T, prev: T) => void,
  ): T | null =>
    edb.transaction(() => {
      const prev = one<T>(`SELECT data FROM ${table} WHERE id = ?`, id)
      if (!prev) return null
      const next = applyPatch(prev, patch)
      if (write) write(next, prev)
      else run(`UPDATE ${table} SET data = ? WHERE id = ?`, JSON.stringify(next), id)
      audited(next, options)
      return next
    })

  return { edb, one, many, run, audited, update }
}
type TenantTables = ReturnType<typeof tenantTables>

/** Accounts (unique public id), and the removal of an account's data. */
function accountMethods(t: TenantTables): TenantAccountMethods {
  const { edb, one, many, run, audited, update } = t
  return {
    async createAccount(account: AccountRecord, options) {
      const record = { ...account, public_id: normalizePublicId(account.public_id) }
      edb.transaction(() => {
        if (one(`SELECT data FROM tenant_accounts WHERE public_id = ?`, record.public_id)) throw new DuplicateError('public_id')
        if (one(`SELECT data FROM tenant_accounts WHERE id = ?`, record.id)) throw new DuplicateError('account id')
        run(`INSERT INTO tenant_accounts (id, public_id, data) VALUES (?, ?, ?)`, record.id, record.public_id, JSON.stringify(record))
        audited(record, options)
      })
    },
    async getAccount(id) {
      return one<AccountRecord>(`SELECT data FROM tenant_accounts WHERE id = ?`, id)
    },
    async getAccountByPublicId(publicId) {
      return one<AccountRecord>(`SELECT data FROM tenant_accounts WHERE public_id = ?`, normalizePublicId(publicId))
    },
    async updateAccount(id, patch: Patch<AccountRecord>, options) {
      const normalized = patch.public_id === undefined ? patch : { ...patch, public_id: normalizePublicId(patch.public_id) }
      return update<AccountRecord>('tenant_accounts', id, normalized, options, (next, prev) => {
        if (next.public_id !== prev.public_id && one(`SELECT data FROM tenant_accounts WHERE public_id = ?`, next.public_id)) {
          throw new DuplicateError('public_id')
        }
        run(`UPDATE tenant_accounts SET public_id = ?, data = ? WHERE id = ?`, next.public_id, JSON.stringify(next), id)
      })
    },
    async listAccounts({ after, limit }) {
      return many<AccountRecord>(`SELECT data FROM tenant_accounts WHERE id > ? ORDER BY id LIMIT ?`, after ?? '', limit)
    },
    async deleteAccountData(accountId) {
      edb.transaction(() => {
        for (const table of ACCOUNT_TABLES) {
          run(`DELETE FROM ${table} WHERE ${table === 'tenant_accounts' ? 'id' : 'account_id'} = ?`, accountId)
        }
      })
    },
  }
}

/** API keys, each with a unique hash (the per-request lookup). */
function apiKeyMethods(t: TenantTables): TenantApiKeyMethods {
  const { edb, one, many, run, audited, update } = t
  return {
    async createApiKey(k: ApiKeyRecord, options) {
      edb.transaction(() => {
        if (one(`SELECT data FROM tenant_api_keys WHERE id = ? OR hash = ?`, k.id, k.hash)) throw new DuplicateError('api key')
        run(`INSERT INTO tenant_api_keys (id, account_id, hash, data) VALUES (?, ?, ?, ?)`, k.id, k.account_id, k.hash, JSON.stringify(k))
        audited(k, options)
      })
    },
    async getApiKey(id) {
      return one<ApiKeyRecord>(`SELECT data FROM tenant_api_keys WHERE id = ?`, id)
    },
    async getApiKeyByHash(hash) {
      return one<ApiKeyRecord>(`SELECT data FROM tenant_api_keys WHERE hash = ?`, hash)
    },
    async updateApiKey(id, patch, options) {
      return update<ApiKeyRecord>('tenant_api_keys', id, patch, options, (next, prev) => {
        if (next.hash !== prev.hash && one(`SELECT data FROM tenant_api_keys WHERE hash = ?`, next.hash)) throw new DuplicateError('api key')
        run(`UPDATE tenant_api_keys SET hash = ?, data = ? WHERE id = ?`, next.hash, JSON.stringify(next), id)
      })
    },
    async listApiKeys(accountId) {
      return many<ApiKeyRecord>(`SELECT data FROM tenant_api_keys WHERE account_id = ? ORDER BY json_extract(data, '$.created_at'), id`, accountId)
    },
  }
}

/** Partner CRM locations, one per (account, location id), found by a token hash too. */
function locationMethods(t: TenantTables): TenantLocationMethods {
  const { edb, one, many, run, audited } = t
  return {
    async putLocation(l: LocationRecord, options) {
      edb.transaction(() => {
        const existing = one<LocationRecord>(`SELECT data FROM tenant_locations WHERE account_id = ? AND location_id = ?`, l.account_id, l.location_id)
        if (existing?.active) throw new DuplicateError('location')
        run(`INSERT OR REPLACE INTO tenant_locations (account_id, location_id, data) VALUES (?, ?, ?)`, l.account_id, l.location_id, JSON.stringify(l))
        audited(l, options)
      })
    },
    async getLocation(accountId, locationId) {
      return one<LocationRecord>(`SELECT data FROM tenant_locations WHERE account_id = ? AND location_id = ?`, accountId, locationId)
    },
    async findLocationByTokenHash(accountId, hash) {
      return one<LocationRecord>(
        `SELECT data FROM tenant_locations WHERE account_id = ? AND EXISTS (SELECT 1 FROM json_each(data, '$.token_hashes') WHERE json_extract(value, '$.hash') = ?) LIMIT 1`,
        accountId,
        hash,
      )
    },
    async updateLocation(accountId, locationId, patch, options) {
      return edb.transaction(() => {
        const prev = one<LocationRecord>(`SELECT data FROM tenant_locations WHERE account_id = ? AND location_id = ?`, accountId, locationId)
        if (!prev) return null
        const next = applyPatch(prev, patch)
        run(`UPDATE tenant_locations SET data = ? WHERE account_id = ? AND location_id = ?`, JSON.stringify(next), accountId, locationId)
        audited(next, options)
        return next
      })
    },
    async listLocations(accountId) {
      return many<LocationRecord>(`SELECT data FROM tenant_locations WHERE account_id = ? ORDER BY json_extract(data, '$.created_at'), location_id`, accountId)
    },
  }
}

/** Connections, custom field definitions and integrations: records under their own id. */
function recordMethods(t: TenantTables): TenantRecordMethods {
  const { edb, one, many, run, audited, update } = t
  return {
    async createConnection(c: ConnectionRecord, options) {
      edb.transaction(() => {
        if (one(`SELECT data FROM tenant_connections WHERE id = ?`, c.id)) throw new DuplicateError('connection id')
        run(`INSERT INTO tenant_connections (id, account_id, created_at, data) VALUES (?, ?, ?, ?)`, c.id, c.account_id, c.created_at, JSON.stringify(c))
        audited(c, options)
      })
    },
    async getConnection(id) {
      return one<ConnectionRecord>(`SELECT data FROM tenant_connections WHERE id = ?`, id)
    },
    async updateConnection(id, patch, options) {
      return update<ConnectionRecord>('tenant_connections', id, patch, options)
    },
    async listConnections(accountId) {
      return many<ConnectionRecord>(`SELECT data FROM tenant_connections WHERE account_id = ? ORDER BY created_at, id`, accountId)
    },

    async createCustomField(d: CustomFieldDefinition, options) {
      edb.transaction(() => {
        if (one(`SELECT data FROM tenant_custom_fields WHERE account_id = ? AND key = ?`, d.account_id, d.key)) throw new DuplicateError('custom field')
        run(`INSERT INTO tenant_custom_fields (account_id, key, created_at, data) VALUES (?, ?, ?, ?)`, d.account_id, d.key, d.created_at, JSON.stringify(d))
        audited(d, options)
      })
    },
    async listCustomFields(accountId) {
      return many<CustomFieldDefinition>(`SELECT data FROM tenant_custom_fields WHERE account_id = ? ORDER BY created_at, key`, accountId)
    },

    async createIntegration(i: IntegrationRecord, options) {
      edb.transaction(() => {
        if (one(`SELECT data FROM tenant_integrations WHERE id = ?`, i.id)) throw new DuplicateError('integration id')
        run(`INSERT INTO tenant_integrations (id, account_id, created_at, data) VALUES (?, ?, ?, ?)`, i.id, i.account_id, i.created_at, JSON.stringify(i))
        audited(i, options)
      })
    },
    async getIntegration(id) {
      return one<IntegrationRecord>(`SELECT data FROM tenant_integrations WHERE id = ?`, id)
    },
    async updateIntegration(id, patch, options) {
      return update<IntegrationRecord>('tenant_integrations', id, patch, options)
    },
    async listIntegrations(accountId) {
      return many<IntegrationRecord>(`SELECT data FROM tenant_integrations WHERE account_id = ? ORDER BY created_at, id`, accountId)
    },
    async deleteIntegration(id, options) {
      return edb.transaction(() => {
        const prev = one<IntegrationRecord>(`SELECT data FROM tenant_integrations WHERE id = ?`, id)
        if (!prev) return null
        run(`DELETE FROM tenant_integrations WHERE id = ?`, id)
        audited(prev, options)
        return prev
      })
    },
  }
}

export function createEmbeddedTenantStore(edb: EmbeddedDb): TenantStore {
  edb.db.exec(SCHEMA)
  edb.db.exec(VERSION_SCHEMA)
  const tables = tenantTables(edb)
  return {
    ...accountMethods(tables),
    ...apiKeyMethods(tables),
    ...locationMethods(tables),
    ...recordMethods(tables),
    async close() {
      // the database belongs to the platform deps, which close it after every adapter
    },
  }
}

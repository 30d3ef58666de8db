import { FieldPath } from '@google-cloud/firestore'
import type { DocumentData, DocumentReference, Firestore } from '@google-cloud/firestore'
import type { AccountRecord, ApiKeyRecord, ConnectionRecord, CustomFieldDefinition, IntegrationRecord, LocationRecord } from '../../model/records.ts'
import type { Patch, TenantStore, TenantAccountMethods, TenantApiKeyMethods, TenantLocationMethods, TenantRecordMethods } from '../../ports/tenant-store.ts'
import { DuplicateError } from '../../errors/duplicate-error.ts'
import { applyPatch, normalizePublicId } from '../tenant-patch.ts'
import { isAlreadyExists } from './grpc-codes.ts'
import { bumpVersion } from './firestore-tenant-config-version.ts'
import { byCreatedThen, pairId, type TenantDocs, tenantDocs, toLocation, toLocationDoc } from './firestore-tenant-docs.ts'

/**
 * Layout (top-level collections, document id = record id, every per-account doc carries `account_id`):
 *   accounts/{id}                       account_public_ids/{public_id} -> { account_id }   (unique public id)
 *   connections/{id}                    api_keys/{id}
 *   api_key_hashes/{hash}               a full copy of the key record: the per-request lookup is one read
 *   locations/{account}:{location}      custom_fields/{account}:{key}  (ids URI-encoded, so ':' is unambiguous)
 *   integrations/{id}
 * (the delivery log and idempotency claims: firestore-delivery-log.ts, firestore-idempotency-claims.ts)
 * Unique constraints are enforced by document ids: `create()` fails with ALREADY_EXISTS, and writes that
 * move a reservation run in a transaction. Composite indexes and TTL fields: ../firestore-indexes.ts.
 * Every write also increments `tenant_config_version/current` in its own batch or transaction (the
 * version the instances' lookup caches poll: firestore-tenant-config-version.ts) and, when given
 * one (WriteOptions), creates the change's audit entry (firestore-audit-log.ts) in it too.
 */
const ACCOUNT_COLLECTIONS = ['connections', 'api_keys', 'api_key_hashes', 'locations', 'custom_fields', 'integrations', 'account_public_ids'] as const

/** Accounts, their unique public ids (a reservation document each), and the removal of an account's data. */
function accountMethods(docs: TenantDocs): TenantAccountMethods {
  const { firestore, accounts, publicIds, read, versioned } = docs
  return {
    async createAccount(account: AccountRecord, options) {
      const record = { ...account, public_id: normalizePublicId(account.public_id) }
      const batch = firestore.batch()
      batch.create(accounts.doc(record.id), record)
      batch.create(publicIds.doc(record.public_id), { account_id: record.id })
      versioned(batch, record, options)
      try {
        await batch.commit()
      } catch (err) {
        if (!isAlreadyExists(err)) throw err
        const owner = await read<{ account_id: string }>(publicIds.doc(record.public_id))
        throw new DuplicateError(owner ? 'public_id' : 'account id')
      }
    },
    async getAccount(id) {
      return read<AccountRecord>(accounts.doc(id))
    },
    async getAccountByPublicId(publicId) {
      const owner = await read<{ account_id: string }>(publicIds.doc(normalizePublicId(publicId)))
      return owner ? read<AccountRecord>(accounts.doc(owner.account_id)) : null
    },
    async updateAccount(id, patch: Patch<AccountRecord>, options) {
      const ref = accounts.doc(id)
      const newPublicId = patch.public_id === undefined ? undefined : normalizePublicId(patch.public_id)
      return firestore.runTransaction(async (tx) => {
        // all reads before any write, as transactions require
        const snap = await tx.get(ref)
        const reservation = newPublicId === undefined ? null : await tx.get(publicIds.doc(newPublicId))
        if (!snap.exists) return null
        const prev = snap.data() as AccountRecord
        const next = applyPatch(prev, newPublicId === undefined ? patch : { ...patch, public_id: newPublicId })
        if (next.public_id !== prev.public_id) {
          if (reservation?.exists) throw new DuplicateError('public_id')
          tx.delete(publicIds.doc(prev.public_id))
          tx.create(publicIds.doc(next.public_id), { account_id: id })
        }
        tx.set(ref, next)
        versioned(tx, next, options)
        return next
      })
    },
    async listAccounts({ after, limit }) {
      let query = accounts.orderBy(FieldPath.documentId()).limit(limit)
      if (after) query = query.startAfter(after)
      return (await query.get()).docs.map((d) => d.data() as AccountRecord)
    },
    async deleteAccountData(accountId) {
      const refs: DocumentReference[] = [accounts.doc(accountId)]
      for (const name of ACCOUNT_COLLECTIONS) {
        const snap = await docs.col(name).where('account_id', '==', accountId).select().get()
        refs.push(...snap.docs.map((d) => d.ref))
      }
      const writer = firestore.bulkWriter()
      const deletions = refs.map((ref) => writer.delete(ref))
      await Promise.all([...deletions, writer.close()])
      // after the deletions (a BulkWriter is not atomic): a cache may keep a deleted record until then
      await docs.version.set(bumpVersion(), { merge: true })
    },
  }
}

/** API keys: the key document and its copy under the key's hash (the per-request lookup is one read). */
function apiKeyMethods(docs: TenantDocs): TenantApiKeyMethods {
  const { firestore, apiKeys, apiKeyHashes, read, versioned } = docs
  return {
    async createApiKey(k: ApiKeyRecord, options) {
      const batch = firestore.batch()
      batch.create(apiKeys.doc(k.id), k)
      batch.create(apiKeyHashes.doc(k.hash), k)
      versioned(batch, k, options)
      try {
        await batch.commit()
      } catch (err) {
        throw isAlreadyExists(err) ? new DuplicateError('api key') : err
      }
    },
    async getApiKey(id) {
      return read<ApiKeyRecord>(apiKeys.doc(id))
    },
    async getApiKeyByHash(hash) {
      return read<ApiKeyRecord>(apiKeyHashes.doc(hash))
    },
    async updateApiKey(id, patch, options) {
      const ref = apiKeys.doc(id)
      return firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        const newHashDoc = patch.hash === undefined ? null : await tx.get(apiKeyHashes.doc(patch.hash))
        if (!snap.exists) return null
        const prev = snap.data() as ApiKeyRecord
        const next = applyPatch(prev, patch)
        if (next.hash !== prev.hash) {
          if (newHashDoc?.exists) throw new DuplicateError('api key')
          tx.delete(apiKeyHashes.doc(prev.hash))
        }
        tx.set(ref, next)
        tx.set(apiKeyHashes.doc(next.hash), next)
        versioned(tx, next, options)
        return next
      })
    },
    async listApiKeys(accountId) {
      return (await docs.listByAccount<ApiKeyRecord>(apiKeys, accountId)).sort(byCreatedThen((r) => r.id))
    },
  }
}

/** Partner CRM locations, one document per (account, location id), found by a token hash too. */
function locationMethods(docs: TenantDocs): TenantLocationMethods {
  const { firestore, locations, versioned } = docs
  return {
    async putLocation(l: LocationRecord, options) {
      const ref = locations.doc(pairId(l.account_id, l.location_id))
      await firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        if (snap.exists && (snap.data() as LocationRecord).active) throw new DuplicateError('location')
        tx.set(ref, toLocationDoc(l))
        versioned(tx, l, options)
      })
    },
    async getLocation(accountId, locationId) {
      const data = await docs.read<DocumentData>(locations.doc(pairId(accountId, locationId)))
      return data ? toLocation(data) : null
    },
    async findLocationByTokenHash(accountId, hash) {
      // hashes are keyed hashes of random tokens: unique across accounts, so the account is checked here
      const snap = await locations.where('token_hash_index', 'array-contains', hash).limit(10).get()
      const found = snap.docs.map((d) => toLocation(d.data())).find((l) => l.account_id === accountId)
      return found ?? null
    },
    async updateLocation(accountId, locationId, patch, options) {
      const ref = locations.doc(pairId(accountId, locationId))
      return firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        if (!snap.exists) return null
        const next = applyPatch(toLocation(snap.data()!), patch)
        tx.set(ref, toLocationDoc(next))
        versioned(tx, next, options)
        return next
      })
    },
    async listLocations(accountId) {
      const snap = await locations.where('account_id', '==', accountId).get()
      return snap.docs.map((d) => toLocation(d.data())).sort(byCreatedThen((r) => r.location_id))
    },
  }
}

/** Connections, custom field definitions and integrations: records under their own id. */
function recordMethods(docs: TenantDocs): TenantRecordMethods {
  const { firestore, connections, customFields, integrations, read, createOrDuplicate, update, listByAccount, versioned } = docs
  return {
    async createConnection(c: ConnectionRecord, options) {
      await createOrDuplicate('connection id', connections.doc(c.id), c, options)
    },
    async getConnection(id) {
      return read<ConnectionRecord>(connections.doc(id))
    },
    async updateConnection(id, patch, options) {
      return update<ConnectionRecord>(connections.doc(id), patch, options)
    },
    async listConnections(accountId) {
      return (await listByAccount<ConnectionRecord>(connections, accountId)).sort(byCreatedThen((r) => r.id))
    },

    async createCustomField(d: CustomFieldDefinition, options) {
      await createOrDuplicate('custom field', customFields.doc(pairId(d.account_id, d.key)), d, options)
    },
    async listCustomFields(accountId) {
      return (await listByAccount<CustomFieldDefinition>(customFields, accountId)).sort(byCreatedThen((r) => r.key))
    },

    async createIntegration(i: IntegrationRecord, options) {
      await createOrDuplicate('integration id', integrations.doc(i.id), i, options)
    },
    async getIntegration(id) {
      return read<IntegrationRecord>(integrations.doc(id))
    },
    async updateIntegration(id, patch, options) {
      return update<IntegrationRecord>(integrations.doc(id), patch, options)
    },
    async listIntegrations(accountId) {
      return (await listByAccount<IntegrationRecord>(integrations, accountId)).sort(byCreatedThen((r) => r.id))
    },
    async deleteIntegration(id, options) {
      const ref = integrations.doc(id)
      return firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        if (!snap.exists) return null
        const prev = snap.data() as IntegrationRecord
        tx.delete(ref)
        versioned(tx, prev, options)
        return prev
      })
    },
  }
}

export function createFirestoreTenantStore(firestore: Firestore): TenantStore {
  const docs = tenantDocs(firestore)
  return {
    ...accountMethods(docs),
    ...apiKeyMethods(docs),
    ...locationMethods(docs),
    ...recordMethods(docs),
    async close() {
      // the Firestore client belongs to the platform deps, which terminate it
    },
  }
}

import type { CollectionReference, DocumentData, DocumentReference, Firestore, Query } from '@google-cloud/firestore'
import type { LocationRecord } from '../../model/records.ts'
import type { WriteOptions } from '../../ports/tenant-store.ts'
import { DuplicateError } from '../../errors/duplicate-error.ts'
import { applyPatch } from '../tenant-patch.ts'
import { createAuditEntryIn } from './firestore-audit-log.ts'
import { isAlreadyExists } from './grpc-codes.ts'
import { bumpVersion, tenantConfigVersionRef } from './firestore-tenant-config-version.ts'

/** a batch or a transaction: what a tenant write adds its version bump and audit entry to */
interface TenantWrite {
  set(ref: DocumentReference, data: DocumentData, options: { merge: true }): unknown
  create(ref: DocumentReference, data: DocumentData): unknown
}

export const pairId = (a: string, b: string) => `${encodeURIComponent(a)}:${encodeURIComponent(b)}`
export const byCreatedThen =
  <T extends { created_at: string }>(tie: (r: T) => string) =>
  (x: T, y: T) =>
    x.created_at < y.created_at ? -1 : x.created_at > y.created_at ? 1 : tie(x) < tie(y) ? -1 : tie(x) > tie(y) ? 1 : 0

/**
 * A location document also holds `token_hash_index`, the bare hashes of `token_hashes`: Firestore
 * can match a whole array element only, so this is what `findLocationByTokenHash` queries
 * (array-contains, served by the automatic single-field index). Never part of the record.
 */
export function toLocationDoc(l: LocationRecord): DocumentData {
  return { ...l, token_hash_index: l.token_hashes.map((h) => h.hash) }
}
export function toLocation(data: DocumentData): LocationRecord {
  const { token_hash_index: _index, ...record } = data
  return record as LocationRecord
}

/** The collections of the tenant store and the steps its reads and writes share. */
export function tenantDocs(firestore: Firestore) {
  const col = (name: string): CollectionReference => firestore.collection(name)
  const version = tenantConfigVersionRef(firestore)
  /** the version bump every write makes in its own batch or transaction */
  const bump = (w: TenantWrite) => w.set(version, bumpVersion(), { merge: true })
  /** the change's audit entry, in the change's batch or transaction (ports/tenant-store.ts, WriteOptions) */
  const audited = <T>(w: TenantWrite, written: T, options: WriteOptions<T> | undefined) => {
    if (options?.audit) createAuditEntryIn(firestore, w, options.audit(written))
  }
  /** what every write adds to its batch or transaction: the version bump and the audit entry */
  const versioned = <T>(w: TenantWrite, written: T, options: WriteOptions<T> | undefined) => {
    bump(w)
    audited(w, written, options)
  }

  return {
    firestore,
    col,
    version,
    versioned,
    accounts: col('accounts'),
    publicIds: col('account_public_ids'),
    connections: col('connections'),
    apiKeys: col('api_keys'),
    apiKeyHashes: col('api_key_hashes'),
    locations: col('locations'),
    customFields: col('custom_fields'),
    integrations: col('integrations'),

    async read<T>(ref: DocumentReference): Promise<T | null> {
      const snap = await ref.get()
      return snap.exists ? (snap.data() as T) : null
    },
    async createOrDuplicate<T extends object>(what: string, ref: DocumentReference, data: T, options: WriteOptions<T> | undefined): Promise<void> {
      const batch = firestore.batch()
      batch.create(ref, data)
      versioned(batch, data, options)
      try {
        await batch.commit()
      } catch (err) {
        throw isAlreadyExists(err) ? new DuplicateError(what) : err
      }
    },
    /** transactional read-modify-write: the patch replaces the given top-level fields */
    update<T extends object>(ref: DocumentReference, patch: object, options: WriteOptions<T> | undefined): Promise<T | null> {
      return firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        if (!snap.exists) return null
        const next = applyPatch(snap.data() as T, patch)
        tx.set(ref, next)
        versioned(tx, next, options)
        return next
      })
    },
    async listByAccount<T>(ref: Query, accountId: string): Promise<T[]> {
      return (await ref.where('account_id', '==', accountId).get()).docs.map((d) => d.data() as T)
    },
  }
}

export type TenantDocs = ReturnType<typeof tenantDocs>

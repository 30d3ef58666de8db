import type { DocumentData, DocumentReference, Firestore } from '@google-cloud/firestore'
import type { AuditEntry, AuditLogStore } from '../../ports/audit-log.ts'

/**
 * Layout: `audit_log/{accountId}/entries/{id}`. One subcollection per account, so the
 * newest-first page is an order on `id` alone, served by Firestore's automatic single-field
 * index (no composite index to declare). Ids are time-ordered (domain/audit/record.ts).
 */
const entriesOf = (firestore: Firestore, accountId: string) => firestore.collection('audit_log').doc(accountId).collection('entries')

/**
 * Adds the entry's creation to a batch or transaction: the tenant store writes a change's entry
 * with the change, so both commit or neither does. Create, not set: an id is never reused, and an
 * entry is never rewritten.
 */
export function createAuditEntryIn(firestore: Firestore, w: { create(ref: DocumentReference, data: DocumentData): unknown }, e: AuditEntry): void {
  w.create(entriesOf(firestore, e.account_id).doc(e.id), e)
}

export function createFirestoreAuditLogStore(firestore: Firestore): AuditLogStore {
  const entries = (accountId: string) => entriesOf(firestore, accountId)
  return {
    async append(e) {
      const batch = firestore.batch()
      createAuditEntryIn(firestore, batch, e)
      await batch.commit()
    },
    async list(accountId, { before, after, limit }) {
      // whether anything lies beyond a page on the side it was not read from: one document
      const anyWhere = async (op: '>=' | '<=', id: string) => !(await entries(accountId).where('id', op, id).limit(1).get()).empty
      if (after !== undefined && before === undefined) {
        // the newer page: the `limit` entries just above `after`, read upwards, shown newest first
        const [snap, olderExists] = await Promise.all([
          entries(accountId)
            .orderBy('id', 'asc')
            .where('id', '>', after)
            .limit(limit + 1)
            .get(),
          anyWhere('<=', after),
        ])
        const data = snap.docs
          .slice(0, limit)
          .map((d) => d.data() as AuditEntry)
          .reverse()
        return {
          data,
          next_before: olderExists ? (data[data.length - 1]?.id ?? null) : null,
          newer_after: snap.docs.length > limit ? data[0]!.id : null,
        }
      }
      let query = entries(accountId).orderBy('id', 'desc')
      if (before !== undefined) query = query.where('id', '<', before)
      const [snap, newerExists] = await Promise.all([query.limit(limit + 1).get(), before !== undefined ? anyWhere('>=', before) : Promise.resolve(false)])
      const data = snap.docs.slice(0, limit).map((d) => d.data() as AuditEntry)
      return { data, next_before: snap.docs.length > limit ? data[data.length - 1]!.id : null, newer_after: newerExists ? (data[0]?.id ?? null) : null }
    },
    async close() {},
  }
}

import { FieldPath, Timestamp } from '@google-cloud/firestore'
import type { DocumentData, Firestore, Query } from '@google-cloud/firestore'
import type { DeliveryRecord } from '../../model/records.ts'
import type { DeliveryLog } from '../../ports/delivery-log.ts'
import { DELIVERY_RETENTION_MS } from '../tenant-patch.ts'

/**
 * `deliveries/{id}`: the record plus `expire_at` for the TTL policy (../google/firestore-indexes.ts
 * names it and the composite index the listing needs).
 */
function toDelivery(data: DocumentData): DeliveryRecord {
  const { expire_at: _expireAt, ...record } = data
  return record as DeliveryRecord
}

/** The integration's deliveries created in the range (both ends optional), as list() and the counts narrow them. */
function inRange(query: Query, createdFrom: string | undefined, createdBefore: string | undefined): Query {
  let q = query
  if (createdFrom !== undefined) q = q.where('created_at', '>=', createdFrom)
  if (createdBefore !== undefined) q = q.where('created_at', '<', createdBefore)
  return q
}

export function createFirestoreDeliveryLog(firestore: Firestore): DeliveryLog {
  const deliveries = firestore.collection('deliveries')
  return {
    async put(d: DeliveryRecord) {
      const expireAt = Timestamp.fromMillis(Date.parse(d.created_at) + DELIVERY_RETENTION_MS)
      await deliveries.doc(d.id).set({ ...d, expire_at: expireAt })
    },
    async get(id) {
      const snap = await deliveries.doc(id).get()
      return snap.exists ? toDelivery(snap.data()!) : null
    },
    async list(integrationId, { before, limit, createdFrom, createdBefore, status }) {
      // composite index: deliveries (integration_id ASC, created_at DESC, __name__ DESC), or with
      // a status (integration_id ASC, status ASC, created_at DESC, __name__ DESC); the time range
      // is on created_at, the first order field, so the same index serves it
      let query: Query = deliveries.where('integration_id', '==', integrationId)
      if (status !== undefined) query = query.where('status', '==', status)
      query = inRange(query, createdFrom, createdBefore)
      query = query.orderBy('created_at', 'desc').orderBy(FieldPath.documentId(), 'desc').limit(limit)
      if (before !== undefined) {
        const cursor = await deliveries.doc(before).get()
        // an unknown cursor (expired or foreign) ends the listing rather than restarting it
        if (!cursor.exists || cursor.get('integration_id') !== integrationId) return []
        // a position (created_at, id) in the order: its row's status now does not matter
        query = query.startAfter(cursor)
      }
      return (await query.get()).docs.map((d) => toDelivery(d.data()))
    },
    async countByStatus(integrationId, { createdFrom, createdBefore, cap }) {
      // count() aggregations on the status index: billed by index entries read (one read per up
      // to 1000), not per document; limit(cap) stops each at the cap
      const count = async (status: DeliveryRecord['status']) => {
        const query = inRange(deliveries.where('integration_id', '==', integrationId).where('status', '==', status), createdFrom, createdBefore)
        return (await query.limit(cap).count().get()).data().count
      }
      const [pending, retrying, succeeded, failed] = await Promise.all([count('pending'), count('retrying'), count('succeeded'), count('failed')])
      return { pending, retrying, succeeded, failed }
    },
    async listDue(before, limit) {
      // a single-field range and order: Firestore's automatic index serves it (no composite
      // index); done deliveries have next_attempt_at null, which a string range never matches
      const snap = await deliveries.where('next_attempt_at', '<', before).orderBy('next_attempt_at').limit(limit).get()
      return snap.docs.map((d) => toDelivery(d.data()))
    },
    async deleteAccountData(accountId) {
      const snap = await deliveries.where('account_id', '==', accountId).select().get()
      if (snap.empty) return
      const writer = firestore.bulkWriter()
      const deletions = snap.docs.map((d) => writer.delete(d.ref))
      await Promise.all([...deletions, writer.close()])
    },
    async close() {
      // the Firestore client belongs to the platform deps, which terminate it
    },
  }
}

import { Timestamp } from '@google-cloud/firestore'
import type { CollectionReference, Firestore } from '@google-cloud/firestore'
import type { PushLog, PushLogEntry, PushOutcome } from '../../ports/push-log.ts'

/**
 * Layout: `push_log/{connectionId}/pushes/{id}` (accepted pushes) and
 * `push_log/{connectionId}/refused_pushes/{id}` (refused ones: their own slice, so a flood of
 * refusals never trims an accepted entry), each the entry plus `expire_at` (a Timestamp: the
 * field of the collections' TTL policies, firestore-indexes.ts). One subcollection per connection
 * and kind, so the newest-first read orders on `id` alone (Firestore's automatic single-field
 * index, no composite index). The count bound: after a write, one count aggregation per
 * connection and kind written (cheap: one read per 1,000 index entries), and only when over
 * `keep` are the oldest read and deleted. The worker's refusals:
 * `push_log/{connectionId}/push_outcomes/{requestId}` (TTL on `expire_at`), read with the
 * entries in one getAll.
 */
const MAX_TRIM = 400

/** accepted: a 2xx answer (ports/push-log.ts) */
const isAccepted = (e: PushLogEntry) => e.status >= 200 && e.status < 300

async function trimTo(collection: CollectionReference, keep: number, firestore: Firestore): Promise<void> {
  const count = (await collection.count().get()).data().count
  if (count <= keep) return
  const old = await collection
    .orderBy('id', 'asc')
    .limit(Math.min(count - keep, MAX_TRIM))
    .select()
    .get()
  const trim = firestore.batch()
  for (const d of old.docs) trim.delete(d.ref)
  await trim.commit()
}

async function newest(collection: CollectionReference, limit: number, nowMs: number): Promise<PushLogEntry[]> {
  if (limit <= 0) return []
  const snap = await collection.orderBy('id', 'desc').limit(limit).get()
  // the TTL policy deletes within a day or so of expiry: an expired entry is skipped until then
  return snap.docs
    .map((d) => {
      const { expire_at: _ttl, ...entry } = d.data() as PushLogEntry & { expire_at?: unknown }
      return entry as PushLogEntry
    })
    .filter((e) => e.expire_at_ms > nowMs)
}

export function createFirestorePushLog(firestore: Firestore): PushLog {
  const connectionDoc = (connectionId: string) => firestore.collection('push_log').doc(connectionId)
  const acceptedOf = (connectionId: string) => connectionDoc(connectionId).collection('pushes')
  const refusedOf = (connectionId: string) => connectionDoc(connectionId).collection('refused_pushes')
  const outcomesOf = (connectionId: string) => connectionDoc(connectionId).collection('push_outcomes')
  return {
    async append(entries, keep, _nowMs) {
      if (entries.length === 0) return
      const batch = firestore.batch()
      const written = new Map<string, { collection: CollectionReference; keep: number }>()
      for (const e of entries) {
        const accepted = isAccepted(e)
        const collection = accepted ? acceptedOf(e.connection_id) : refusedOf(e.connection_id)
        batch.set(collection.doc(e.id), { ...e, expire_at: Timestamp.fromMillis(e.expire_at_ms) })
        written.set(collection.path, { collection, keep: accepted ? keep.accepted : keep.refused })
      }
      await batch.commit()
      // expired entries are the TTL policy's to delete; the count bound is this adapter's
      for (const { collection, keep: n } of written.values()) await trimTo(collection, n, firestore)
    },
    async recordOutcome(connectionId, requestId, outcome, expireAtMs) {
      await outcomesOf(connectionId)
        .doc(requestId)
        .set({ outcome: JSON.stringify(outcome), expire_at_ms: expireAtMs, expire_at: Timestamp.fromMillis(expireAtMs) })
    },
    async recent(connectionId, limit, nowMs) {
      const [accepted, refused] = await Promise.all([
        newest(acceptedOf(connectionId), limit.accepted, nowMs),
        newest(refusedOf(connectionId), limit.refused, nowMs),
      ])
      const entries = [...accepted, ...refused].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      if (entries.length === 0) return entries
      // the outcomes of these entries in one batched read (documents that do not exist read as missing)
      const outcomes = await firestore.getAll(...entries.map((e) => outcomesOf(connectionId).doc(e.request_id)))
      return entries.map((e, i) => {
        const data = outcomes[i]?.data() as { outcome?: string; expire_at_ms?: number } | undefined
        return data?.outcome && (data.expire_at_ms ?? 0) > nowMs ? { ...e, outcome: JSON.parse(data.outcome) as PushOutcome } : e
      })
    },
    // the Firestore client belongs to whoever created it
    async close() {},
  }
}

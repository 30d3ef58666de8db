import { Timestamp } from '@google-cloud/firestore'
import type { Firestore } from '@google-cloud/firestore'
import type { PushLog, PushLogEntry, PushOutcome } from '../../ports/push-log.ts'

/**
 * Layout: `push_log/{connectionId}/pushes/{id}`, the entry plus `expire_at` (a Timestamp: the
 * field of the `pushes` TTL policy, firestore-indexes.ts). One subcollection per connection, so
 * the newest-first read orders on `id` alone (Firestore's automatic single-field index, no
 * composite index). The count bound: after a write, one count aggregation per connection (cheap:
 * one read per 1,000 index entries), and only when over `keep` are the oldest read and deleted.
 * The worker's refusals: `push_log/{connectionId}/push_outcomes/{requestId}` (TTL on `expire_at`),
 * read with the entries in one getAll.
 */
const MAX_TRIM = 400

export function createFirestorePushLog(firestore: Firestore): PushLog {
  const pushesOf = (connectionId: string) => firestore.collection('push_log').doc(connectionId).collection('pushes')
  const outcomesOf = (connectionId: string) => firestore.collection('push_log').doc(connectionId).collection('push_outcomes')
  return {
    async append(entries: readonly PushLogEntry[], keep: number, _nowMs: number) {
      if (entries.length === 0) return
      const batch = firestore.batch()
      for (const e of entries) batch.set(pushesOf(e.connection_id).doc(e.id), { ...e, expire_at: Timestamp.fromMillis(e.expire_at_ms) })
      await batch.commit()
      // expired entries are the TTL policy's to delete; the count bound is this adapter's
      for (const c of new Set(entries.map((e) => e.connection_id))) {
        const count = (await pushesOf(c).count().get()).data().count
        if (count <= keep) continue
        const old = await pushesOf(c)
          .orderBy('id', 'asc')
          .limit(Math.min(count - keep, MAX_TRIM))
          .select()
          .get()
        const trim = firestore.batch()
        for (const d of old.docs) trim.delete(d.ref)
        await trim.commit()
      }
    },
    async recordOutcome(connectionId, requestId, outcome, expireAtMs) {
      await outcomesOf(connectionId)
        .doc(requestId)
        .set({ outcome: JSON.stringify(outcome), expire_at_ms: expireAtMs, expire_at: Timestamp.fromMillis(expireAtMs) })
    },
    async recent(connectionId, limit, nowMs) {
      const snap = await pushesOf(connectionId).orderBy('id', 'desc').limit(limit).get()
      // the TTL policy deletes within a day or so of expiry: an expired entry is skipped until then
      const entries = snap.docs
        .map((d) => {
          const { expire_at: _ttl, ...entry } = d.data() as PushLogEntry & { expire_at?: unknown }
          return entry as PushLogEntry
        })
        .filter((e) => e.expire_at_ms > nowMs)
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

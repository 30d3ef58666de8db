import { Timestamp } from '@google-cloud/firestore'
import type { Firestore } from '@google-cloud/firestore'
import type { PushLog, PushLogEntry } from '../../ports/push-log.ts'

/**
 * Layout: `push_log/{connectionId}/pushes/{id}`, the entry plus `expire_at` (a Timestamp: the
 * field of the `pushes` TTL policy, firestore-indexes.ts). One subcollection per connection, so
 * the newest-first read orders on `id` alone (Firestore's automatic single-field index, no
 * composite index). The count bound: after a write, one count aggregation per connection (cheap:
 * one read per 1,000 index entries), and only when over `keep` are the oldest read and deleted.
 */
const MAX_TRIM = 400

export function createFirestorePushLog(firestore: Firestore): PushLog {
  const pushesOf = (connectionId: string) => firestore.collection('push_log').doc(connectionId).collection('pushes')
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
    async recent(connectionId, limit, nowMs) {
      const snap = await pushesOf(connectionId).orderBy('id', 'desc').limit(limit).get()
      // the TTL policy deletes within a day or so of expiry: an expired entry is skipped until then
      return snap.docs
        .map((d) => {
          const { expire_at: _ttl, ...entry } = d.data() as PushLogEntry & { expire_at?: unknown }
          return entry as PushLogEntry
        })
        .filter((e) => e.expire_at_ms > nowMs)
    },
    // the Firestore client belongs to whoever created it
    async close() {},
  }
}

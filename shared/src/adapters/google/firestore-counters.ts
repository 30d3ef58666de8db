import { createHash } from 'node:crypto'
import { FieldValue, Timestamp } from '@google-cloud/firestore'
import type { Firestore } from '@google-cloud/firestore'
import type { CounterChange, Counters } from '../../ports/counters.ts'

/**
 * Counters as documents `rate_limits/c-<sha256(key)>` `{ count, expire_at }`, where the rate
 * limiter's plain counters always were (a count kept before this port existed carries on), under
 * the same TTL policy on `expire_at` (each key is given one expiry by its caller: the last write's stands). One WriteBatch of server-side transforms per `apply`
 * (`increment`, `maximum`): no read, no contention retry, since the transforms commute. The TTL
 * policy deletes an expired document within a day or so; until then it reads as 0, and a change
 * to it adds to its old value (callers give expiring counters keys of their own period, so an
 * expired key is not written again).
 */
const counterId = (key: string) => `c-${createHash('sha256').update(key).digest('hex')}`

export function createFirestoreCounters(firestore: Firestore): Counters {
  const collection = firestore.collection('rate_limits')
  return {
    async apply(changes: readonly CounterChange[], expireAtMs: number): Promise<void> {
      if (changes.length === 0) return
      const batch = firestore.batch()
      for (const c of changes) {
        const count = 'add' in c ? FieldValue.increment(c.add) : FieldValue.maximum(c.max)
        batch.set(collection.doc(counterId(c.key)), { count, expire_at: Timestamp.fromMillis(expireAtMs) }, { merge: true })
      }
      await batch.commit()
    },
    async read(keys: readonly string[], nowMs: number): Promise<number[]> {
      if (keys.length === 0) return []
      const snaps = await firestore.getAll(...keys.map((k) => collection.doc(counterId(k))))
      return snaps.map((snap) => {
        if (!snap.exists) return 0
        const expireAt = snap.get('expire_at') as Timestamp | undefined
        return expireAt !== undefined && expireAt.toMillis() > nowMs ? Number(snap.get('count') ?? 0) : 0
      })
    },
    // the Firestore client belongs to whoever created it
    async close() {},
  }
}

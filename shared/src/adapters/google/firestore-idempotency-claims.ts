import { createHash } from 'node:crypto'
import { Timestamp } from '@google-cloud/firestore'
import type { Firestore } from '@google-cloud/firestore'
import type { IdempotencyClaims } from '../../ports/idempotency-claims.ts'
import { isAlreadyExists } from './grpc-codes.ts'

/** `claims/{sha256(key)}` -> `{ expire_at }`, removed by the TTL policy (firestore-indexes.ts) */
export function createFirestoreIdempotencyClaims(firestore: Firestore): IdempotencyClaims {
  const claims = firestore.collection('claims')
  return {
    async claimOnce(key, ttlSeconds, nowMs = Date.now()) {
      const ref = claims.doc(createHash('sha256').update(key).digest('hex'))
      const claim = { expire_at: Timestamp.fromMillis(nowMs + ttlSeconds * 1000) }
      try {
        await ref.create(claim) // the common case: one write, no transaction
        return true
      } catch (err) {
        if (!isAlreadyExists(err)) throw err
      }
      // taken: only an expired claim (not yet removed by the TTL policy) may be re-claimed
      return firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        if (snap.exists && (snap.get('expire_at') as Timestamp).toMillis() > nowMs) return false
        tx.set(ref, claim)
        return true
      })
    },
    async close() {
      // the Firestore client belongs to the platform deps, which terminate it
    },
  }
}

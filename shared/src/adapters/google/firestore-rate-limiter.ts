import { createHash } from 'node:crypto'
import { FieldValue, Timestamp } from '@google-cloud/firestore'
import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore'
import type { RateLimiter } from '../../ports/rate-limiter.ts'
import type { RateLimitDecision, RateLimitWindow } from '../../model/rate-limit-window.ts'
import { ExhaustionMemo, memoKeyOf, rejection } from '../rate-limit-windows.ts'
import { RateLimitLanes, roomFor } from '../rate-limit-lanes.ts'
import { slotOf } from '../../model/rate-limit-window.ts'
import { backoff, isConflict } from './grpc-codes.ts'

/**
 * Fixed-window counters in `rate_limits/{sha256(key)}_{windowName}_{windowStartSeconds}` as
 * `{ count, expire_at }`; `expire_at` (the end of the window) is the field of a TTL policy
 * (listed in ../firestore-indexes.ts), so old windows disappear without a sweeper.
 *
 * The requests of one key waiting in one instance are claimed together (rate-limit-lanes.ts: at
 * most one transaction per key per instance in flight, so only instances contend; 300 concurrent
 * pushes on one key per instance each running their own took longer than the edge's dependency
 * deadline). A claim of n requests is an optimistic transaction over the window documents: one
 * `getAll` reads them, and when the windows have room for k of the n (k > 0), one atomic
 * WriteBatch adds k to them all (the first k waiting are admitted, the rest refused), each
 * write conditioned on the document being unchanged since the read (`update` with
 * `lastUpdateTime`, or `create` for a window's first request). A concurrent increment makes the
 * batch fail as a whole; the request then re-reads and retries after a short jittered wait.
 * So a rejected request counts nowhere, and instances sharing the database never admit more
 * than the limit together. (Not `runTransaction`: the server SDK's read-write transactions lock
 * the documents and, on contention, retry with a backoff starting at one second, which stalls
 * exactly the hot keys a rate limiter serves.)
 *
 * Write rate: every claim with an admitted request writes each of its window documents once. Firestore
 * sustains roughly one write per second per document (bursts above that, about 120 per minute
 * here, work but contend: transactions on one hot document serialize and retry). The platform's
 * limits (120 per 60 s per key; link minting 120 per minute per customer) stay within that, and
 * a request refused by an exhausted window costs no write at all (the in-process memo answers
 * it). A limit that must admit many more requests per second per key would shard: N documents
 * `{…}_{shard}` per window, each request incrementing a random shard inside the transaction and
 * reading all N to sum the count (or giving each shard limit/N and checking only its own, which
 * is cheaper but may refuse slightly early).
 */
const MAX_ATTEMPTS = 30
const BACKOFF_BASE_MS = 4
const BACKOFF_CAP_MS = 200

const retryWait = (attempt: number) => backoff(attempt, BACKOFF_BASE_MS, BACKOFF_CAP_MS)

/** Plain counters (activity counts) share the collection under ids window documents never take. */
const counterId = (key: string) => `c-${createHash('sha256').update(key).digest('hex')}`
/** Notes (the portal's push samples) too, `{ note, expire_at }`: the same TTL policy removes them. */
const noteId = (key: string) => `n-${createHash('sha256').update(key).digest('hex')}`
const liveNote = (snap: DocumentSnapshot, nowMs: number): string | null => {
  const expireAt = snap.exists ? (snap.get('expire_at') as Timestamp | undefined) : undefined
  return expireAt !== undefined && expireAt.toMillis() > nowMs ? String(snap.get('note') ?? '') : null
}

export function createFirestoreRateLimiter(firestore: Firestore): RateLimiter {
  const collection = firestore.collection('rate_limits')
  const memo = new ExhaustionMemo()
  const lanes = new RateLimitLanes(memo)

  return {
    async consume(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<RateLimitDecision> {
      if (windows.length === 0) return { allowed: true }
      const keyHash = createHash('sha256').update(key).digest('hex')
      const slots = windows.map((w) => slotOf(w, nowMs))
      // window names are encoded: a document id cannot hold `/`
      const docIds = slots.map((s) => `${keyHash}_${encodeURIComponent(s.window.name)}_${s.startMs / 1000}`)
      const memoKeys = slots.map((s, i) => memoKeyOf(docIds[i]!, s))

      const known = memo.firstExhausted(memoKeys, nowMs)
      if (known >= 0) return rejection(slots[known]!, nowMs)

      const refs = docIds.map((id) => collection.doc(id))
      // one transaction for the n requests of this key waiting in this instance (rate-limit-lanes.ts)
      const claim = async (n: number) => {
        for (let attempt = 1; ; attempt++) {
          const snaps = await firestore.getAll(...refs)
          const current = snaps.map((snap) => (snap.exists ? Number(snap.get('count') ?? 0) : 0))
          const admitted = roomFor(n, current, slots)
          // all refused: no write. A count read now can only grow within its window, so the refusal holds.
          if (admitted === 0) return { current, admitted }
          const batch = firestore.batch()
          snaps.forEach((snap, i) => {
            const data = { count: current[i]! + admitted, expire_at: Timestamp.fromMillis(slots[i]!.endMs) }
            if (snap.exists) batch.update(refs[i]!, data, { lastUpdateTime: snap.updateTime! })
            else batch.create(refs[i]!, data)
          })
          try {
            await batch.commit()
            return { current, admitted }
          } catch (err) {
            if (!isConflict(err) || attempt >= MAX_ATTEMPTS) throw err
            await retryWait(attempt)
          }
        }
      }
      return lanes.consume(memoKeys.join(' '), slots, memoKeys, nowMs, claim)
    },
    async peek(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<number[]> {
      if (windows.length === 0) return []
      const keyHash = createHash('sha256').update(key).digest('hex')
      const slots = windows.map((w) => slotOf(w, nowMs))
      const snaps = await firestore.getAll(...slots.map((s) => collection.doc(`${keyHash}_${encodeURIComponent(s.window.name)}_${s.startMs / 1000}`)))
      return snaps.map((snap) => (snap.exists ? Number(snap.get('count') ?? 0) : 0))
    },
    async addCounts(increments: readonly { key: string; by: number }[], expireAtMs: number): Promise<void> {
      if (increments.length === 0) return
      // one batch of server-side increments: no read, no contention retry (increments commute)
      const batch = firestore.batch()
      for (const { key, by } of increments) {
        batch.set(collection.doc(counterId(key)), { count: FieldValue.increment(by), expire_at: Timestamp.fromMillis(expireAtMs) }, { merge: true })
      }
      await batch.commit()
    },
    async readCounts(keys: readonly string[], nowMs: number): Promise<number[]> {
      if (keys.length === 0) return []
      const snaps = await firestore.getAll(...keys.map((k) => collection.doc(counterId(k))))
      // the TTL policy deletes expired documents within a day or so: an expired one counts 0 now
      return snaps.map((snap) => {
        const expireAt = snap.exists ? (snap.get('expire_at') as Timestamp | undefined) : undefined
        return expireAt !== undefined && expireAt.toMillis() > nowMs ? Number(snap.get('count') ?? 0) : 0
      })
    },
    async updateNote(key, update, expireAtMs, nowMs) {
      const ref = collection.doc(noteId(key))
      // a transaction: two instances' flushes of one connection merge, neither overwrites the other
      await firestore.runTransaction(async (tx) => {
        const snap = await tx.get(ref)
        tx.set(ref, { note: update(liveNote(snap, nowMs)), expire_at: Timestamp.fromMillis(expireAtMs) })
      })
    },
    async readNotes(keys, nowMs) {
      if (keys.length === 0) return []
      const snaps = await firestore.getAll(...keys.map((k) => collection.doc(noteId(k))))
      return snaps.map((snap) => liveNote(snap, nowMs))
    },
    // the Firestore client belongs to whoever created it
    async close() {},
  }
}

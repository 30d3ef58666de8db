import { createHash } from 'node:crypto'
import type { EmbeddedDb } from '../../embedded/db.ts'
import type { RateLimitDecision, RateLimiter, RateLimitWindow } from './interface.ts'
import { decide, ExhaustionMemo, memoKeyOf, rejection, slotOf } from './windows.ts'

/**
 * Fixed-window counters in `rate_counters`, one row per (sha256(key), window name, window start).
 * A request reads and increments its windows inside a BEGIN IMMEDIATE transaction (shared with
 * the other requests of the same event-loop turn: one commit for all), so every handle and
 * process sharing the file sees one consistent count. Ended windows are pruned now
 * and then (the embedded counterpart of Firestore's TTL policy).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_counters (slot TEXT PRIMARY KEY, count INTEGER NOT NULL, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rate_counters_expiry ON rate_counters (expire_at_ms);
`
const PRUNE_EVERY = 1000

export function createEmbeddedRateLimiter(edb: EmbeddedDb): RateLimiter {
  const { db } = edb
  db.exec(SCHEMA)
  const read = db.prepare('SELECT count FROM rate_counters WHERE slot = ?')
  const write = db.prepare(
    'INSERT INTO rate_counters (slot, count, expire_at_ms) VALUES (?, 1, ?) ON CONFLICT (slot) DO UPDATE SET count = count + 1',
  )
  const prune = db.prepare('DELETE FROM rate_counters WHERE expire_at_ms <= ?')
  const memo = new ExhaustionMemo()
  let sincePrune = 0

  return {
    async consume(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<RateLimitDecision> {
      if (windows.length === 0) return { allowed: true }
      const keyHash = createHash('sha256').update(key).digest('hex')
      const slots = windows.map((w) => slotOf(w, nowMs))
      const slotIds = slots.map((s) => `${keyHash}_${s.window.name}_${s.startMs / 1000}`)
      const memoKeys = slots.map((s, i) => memoKeyOf(slotIds[i]!, s))

      const known = memo.firstExhausted(memoKeys, nowMs)
      if (known >= 0) return rejection(slots[known]!, nowMs)

      // requests arriving in the same turn share one transaction and one commit
      const { admitted, counts } = await edb.groupCommit(() => {
        if (++sincePrune >= PRUNE_EVERY) {
          sincePrune = 0
          prune.run(nowMs)
        }
        const current = slotIds.map((id) => Number((read.get(id) as { count: number } | undefined)?.count ?? 0))
        if (current.some((c, i) => c >= slots[i]!.window.limit)) return { admitted: false, counts: current }
        slotIds.forEach((id, i) => write.run(id, slots[i]!.endMs))
        return { admitted: true, counts: current.map((c) => c + 1) }
      })
      return decide(admitted, counts, slots, memoKeys, memo, nowMs)
    },
    // the database handle belongs to whoever opened it
    async close() {},
  }
}

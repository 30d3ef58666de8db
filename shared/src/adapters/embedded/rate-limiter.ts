import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { EmbeddedDb } from './db.ts'
import type { RateLimiter } from '../../ports/rate-limiter.ts'
import type { RateLimitDecision, RateLimitWindow } from '../../model/rate-limit-window.ts'
import { ExhaustionMemo, memoKeyOf, rejection } from '../rate-limit-windows.ts'
import { slotOf } from '../../model/rate-limit-window.ts'

/**
 * Fixed-window counters in `rate_counters`, one row per (sha256(key), window name, window start).
 * A request claims its windows inside a BEGIN IMMEDIATE transaction (shared with the other
 * requests of the same event-loop turn: one commit for all), so every handle and process sharing
 * the file sees one consistent count. A claim is one conditional upsert per window (counted only
 * while under the limit); a window that refuses undoes the claims made before it in the same
 * transaction, so a refused request counts in no window. Ended windows are pruned now and then
 * (the embedded counterpart of Firestore's TTL policy).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_counters (slot TEXT PRIMARY KEY, count INTEGER NOT NULL, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rate_counters_expiry ON rate_counters (expire_at_ms);
CREATE TABLE IF NOT EXISTS activity_notes (id TEXT PRIMARY KEY, note TEXT NOT NULL, expire_at_ms INTEGER NOT NULL) WITHOUT ROWID;
`
const PRUNE_EVERY = 1000

export function createEmbeddedRateLimiter(edb: EmbeddedDb): RateLimiter {
  const { db } = edb
  db.exec(SCHEMA)
  // one statement per window: a read and then an upsert cost about 1.5× as much CPU per push
  // (docs/performance.md, "Fifth pass"); `changes` says whether the window admitted the request
  const claim = db.prepare(
    'INSERT INTO rate_counters (slot, count, expire_at_ms) VALUES (?, 1, ?) ON CONFLICT (slot) DO UPDATE SET count = count + 1 WHERE count < ?',
  )
  const unclaim = db.prepare('UPDATE rate_counters SET count = count - 1 WHERE slot = ?')
  const prune = db.prepare('DELETE FROM rate_counters WHERE expire_at_ms <= ?')
  // notes are one per connection and overwritten: their expired rows go with the counters' pruning
  const pruneNotes = db.prepare('DELETE FROM activity_notes WHERE expire_at_ms <= ?')
  const readNote = db.prepare('SELECT note FROM activity_notes WHERE id = ? AND expire_at_ms > ?')
  const writeNote = db.prepare(
    'INSERT INTO activity_notes (id, note, expire_at_ms) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET note = excluded.note, expire_at_ms = excluded.expire_at_ms',
  )
  const readLive = db.prepare('SELECT count FROM rate_counters WHERE slot = ? AND expire_at_ms > ?')
  const add = db.prepare(
    'INSERT INTO rate_counters (slot, count, expire_at_ms) VALUES (?, ?, ?) ON CONFLICT (slot) DO UPDATE SET count = count + excluded.count, expire_at_ms = max(expire_at_ms, excluded.expire_at_ms)',
  )
  // a key's hash, computed once: the same few keys (an API key's id, a source's) are counted on every request
  const keyHashes = new LRUCache<string, string>({ max: 10_000 })
  const hashOf = (key: string) => {
    let hash = keyHashes.get(key)
    if (hash === undefined) keyHashes.set(key, (hash = createHash('sha256').update(key).digest('hex')))
    return hash
  }
  const windowSlotIds = (key: string, windows: readonly RateLimitWindow[], nowMs: number) => {
    const keyHash = hashOf(key)
    const slots = windows.map((w) => slotOf(w, nowMs))
    return { slots, slotIds: slots.map((s) => `${keyHash}_${s.window.name}_${s.startMs / 1000}`) }
  }
  // plain counters share the table; their ids cannot collide with window slots (which have `_`)
  const counterId = (key: string) => `c:${createHash('sha256').update(key).digest('hex')}`
  const memo = new ExhaustionMemo()
  let sincePrune = 0

  return {
    async consume(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<RateLimitDecision> {
      if (windows.length === 0) return { allowed: true }
      const { slots, slotIds } = windowSlotIds(key, windows, nowMs)
      const memoKeys = slots.map((s, i) => memoKeyOf(slotIds[i]!, s))

      const known = memo.firstExhausted(memoKeys, nowMs)
      if (known >= 0) return rejection(slots[known]!, nowMs)

      // requests arriving in the same turn share one transaction and one commit
      const refusedBy = await edb.groupCommit(() => {
        if (++sincePrune >= PRUNE_EVERY) {
          sincePrune = 0
          prune.run(nowMs)
          pruneNotes.run(nowMs)
        }
        for (let i = 0; i < slots.length; i++) {
          const slot = slots[i]!
          // a fresh slot's insert ignores the condition: a limit of 0 or less admits nothing at all
          if (slot.window.limit > 0 && claim.run(slotIds[i]!, slot.endMs, slot.window.limit).changes > 0) continue
          for (let j = 0; j < i; j++) unclaim.run(slotIds[j]!)
          return i
        }
        return -1
      })
      if (refusedBy < 0) return { allowed: true }
      // the window stays exhausted until it ends (counts only grow within it): later requests are refused without the store
      memo.remember(memoKeys[refusedBy]!, slots[refusedBy]!.endMs, nowMs)
      return rejection(slots[refusedBy]!, nowMs)
    },
    async peek(key: string, windows: readonly RateLimitWindow[], nowMs: number): Promise<number[]> {
      const { slotIds } = windowSlotIds(key, windows, nowMs)
      return slotIds.map((id) => Number((readLive.get(id, nowMs) as { count: number } | undefined)?.count ?? 0))
    },
    async addCounts(increments: readonly { key: string; by: number }[], expireAtMs: number): Promise<void> {
      if (increments.length === 0) return
      await edb.groupCommit(() => {
        for (const { key, by } of increments) add.run(counterId(key), by, expireAtMs)
      })
    },
    async readCounts(keys: readonly string[], nowMs: number): Promise<number[]> {
      return keys.map((k) => Number((readLive.get(counterId(k), nowMs) as { count: number } | undefined)?.count ?? 0))
    },
    async updateNote(key, update, expireAtMs, nowMs) {
      const id = counterId(key)
      // read and write in one transaction: two instances' flushes never lose each other's counts
      await edb.groupCommit(() => {
        const current = (readNote.get(id, nowMs) as { note: string } | undefined)?.note ?? null
        writeNote.run(id, update(current), expireAtMs)
      })
    },
    async readNotes(keys, nowMs) {
      return keys.map((k) => (readNote.get(counterId(k), nowMs) as { note: string } | undefined)?.note ?? null)
    },
    // the database handle belongs to whoever opened it
    async close() {},
  }
}

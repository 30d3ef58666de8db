import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import type { Topic } from '../../model/topics.ts'
import type { QueueMessage } from '../../ports/queue.ts'
import type { EmbeddedDb } from './db.ts'
import { leaseOwnersOf, REAP_EVERY_MS } from './lease-owners.ts'
import { ALERTS_ROW_SUFFIX, type DeadLetterRows } from './queue-dead-letters.ts'

interface MessageRow {
  seq: number
  id: string
  data: Uint8Array
  attributes: string
  published_at: string
  delivery_count: number
}

/** A message delivered to one subscriber: its row, and the token naming the lease it holds. */
export interface Lease {
  row: MessageRow
  token: string
}

export interface QueueLeases {
  /** Leases up to `max` due messages of `topic` to one subscriber, in one transaction. */
  claim(topic: Topic, max: number): Lease[]
  /** keeps the lease for another lease time (the heartbeat while the handler works) */
  renew(lease: Lease): Promise<unknown>
  /** Settles one delivery (its attempt is the row's delivery count); acks and nacks of one turn share a commit. */
  settle(topic: Topic, lease: Lease, result: 'ack' | 'nack', maxAttempts: number): Promise<void>
  /** Releases the leases of owners that died since this adapter last looked; inside a transaction. */
  reapDeadOwners(now: number): void
}

const MAX_NACK_BACKOFF_MS = 60_000

/** The message a lease delivers (an alerts row is delivered under its message's id). */
export function messageOf({ row }: Lease): QueueMessage {
  return {
    id: row.id.endsWith(ALERTS_ROW_SUFFIX) ? row.id.slice(0, -ALERTS_ROW_SUFFIX.length) : row.id,
    data: Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength), // a view: the row's copy is ours
    attributes: JSON.parse(row.attributes) as Record<string, string>,
    deliveryAttempt: row.delivery_count,
    publishedAt: row.published_at,
  }
}

/**
 * The embedded queue's leases. A delivery is a lease: the row's `visible_at` moves into the future
 * and its `lease_token` names the holder (`<owner> <random>`, the owner being the process,
 * lease-owners.ts). The leases of a process that died are released as soon as an adapter sees it
 * dead (when it opens, and on claims at most every second), not when they run out. Claims run in
 * BEGIN IMMEDIATE transactions, so subscribers in several processes on one file never both hold
 * one message. Ack deletes the row; nack makes it visible again after a backoff, or parks it on
 * the dead-letter topic once it has been delivered maxAttempts times.
 */
export function queueLeases(
  edb: EmbeddedDb,
  deadLetters: DeadLetterRows,
  options: { clock: Clock; logger: Logger; leaseMs: number; nackBackoffMs: number },
): QueueLeases {
  const { clock, logger, leaseMs, nackBackoffMs } = options
  const { db } = edb
  const selectDue = db.prepare(
    'SELECT seq, id, data, attributes, published_at, delivery_count FROM queue_messages WHERE topic = ? AND visible_at <= ? ORDER BY visible_at, seq LIMIT ?',
  )
  const lease = db.prepare('UPDATE queue_messages SET delivery_count = delivery_count + 1, visible_at = ?, lease_token = ? WHERE seq = ?')
  const renew = db.prepare('UPDATE queue_messages SET visible_at = ? WHERE seq = ? AND lease_token = ?')
  const remove = db.prepare('DELETE FROM queue_messages WHERE seq = ?')
  const release = db.prepare('UPDATE queue_messages SET visible_at = ?, lease_token = NULL WHERE seq = ? AND lease_token = ?')
  // the leases of a dead owner: a range of lease_token (`<owner> …`), an index seek
  const releaseOwner = db.prepare(`UPDATE queue_messages SET visible_at = min(visible_at, ?1), lease_token = NULL
    WHERE lease_token >= ?2 || ' ' AND lease_token < ?2 || '!'`)

  const owners = leaseOwnersOf(edb)
  let lastReap = 0

  const leases: QueueLeases = {
    claim(topic, max) {
      return edb.transaction(() => {
        const now = clock.now()
        if (Date.now() - lastReap >= REAP_EVERY_MS) leases.reapDeadOwners(now)
        const rows = selectDue.all(topic, now, max) as unknown as MessageRow[]
        return rows.map((row) => {
          const token = `${owners.self} ${randomUUID()}`
          lease.run(now + leaseMs, token, row.seq)
          return { row: { ...row, delivery_count: row.delivery_count + 1 }, token }
        })
      })
    },

    renew({ row, token }) {
      return edb.groupCommit(() => renew.run(clock.now() + leaseMs, row.seq, token))
    },

    async settle(topic, { row, token }, result, maxAttempts) {
      const attempt = row.delivery_count
      if (result === 'ack') {
        // unconditional: the work is done even if our lease lapsed and someone else holds it now
        await edb.groupCommit(() => remove.run(row.seq))
      } else if (attempt >= maxAttempts) {
        await deadLetters.park(topic, row.seq, row.id, token, attempt)
      } else {
        const backoff = Math.min(nackBackoffMs * 2 ** (attempt - 1), MAX_NACK_BACKOFF_MS)
        await edb.groupCommit(() => release.run(clock.now() + backoff, row.seq, token))
      }
    },

    reapDeadOwners(now) {
      lastReap = Date.now()
      // this adapter's leases object names it to lease-owners.ts: each adapter releases an owner once
      for (const owner of owners.deadOwners(leases)) {
        const { changes } = releaseOwner.run(now, owner)
        if (Number(changes) > 0) logger.warn({ owner, messages: Number(changes) }, 'queue: messages leased by a process that is gone released at once')
      }
    },
  }
  return leases
}

import type { Logger } from 'pino'
import type { Clock } from '../../model/clock.ts'
import { nextSlice } from '../../lib/slices.ts'
import type { EmbeddedDb } from './db.ts'

/** rows deleted per transaction by the sweep: each batch is a short write, the event loop runs between them */
const SWEEP_BATCH = 500

interface SweeperOptions {
  clock: Clock
  logger: Logger
  retentionMs: number
  idleSubscriptionMs: number
  /** how often it sweeps (default 60 s); the first sweep comes within a second of the start */
  sweepIntervalMs: number | undefined
  /** the topics this adapter has consumers on: their subscriptions are kept alive */
  consuming(): Iterable<string>
  /** true once the adapter is closed: a sweep under way stops between batches */
  closed(): boolean
}

interface QueueSweeper {
  /** one sweep now, or the one under way; resolves with the messages removed */
  sweep(): Promise<number>
  /** stops the timers (a sweep under way goes on: see finished) */
  stop(): void
  /** resolves once no sweep is under way */
  finished(): Promise<void>
}

/**
 * The embedded queue's sweep: messages nobody acknowledged within the retention period, and
 * subscriptions created by subscribe() (not declared) that no consumer used for
 * idleSubscriptionMs, with their messages. It deletes a small batch per transaction.
 */
export function startQueueSweeper(edb: EmbeddedDb, options: SweeperOptions): QueueSweeper {
  const { clock, logger, retentionMs, closed } = options
  const { db } = edb
  // expired and not held by a live lease (a handler still working on it finishes first)
  const deleteExpired = db.prepare(`DELETE FROM queue_messages WHERE seq IN (
    SELECT seq FROM queue_messages WHERE expire_at <= ?1 AND (lease_token IS NULL OR visible_at <= ?1) LIMIT ${SWEEP_BATCH})
    RETURNING topic`)
  const markActive = db.prepare('UPDATE queue_subscriptions SET active_at = ? WHERE topic = ?')
  const selectIdle = db.prepare('SELECT topic FROM queue_subscriptions WHERE declared = 0 AND active_at <= ?')
  const deleteSubscription = db.prepare('DELETE FROM queue_subscriptions WHERE topic = ? AND declared = 0 AND active_at <= ?')
  const deleteTopicBatch = db.prepare(`DELETE FROM queue_messages WHERE seq IN (
    SELECT seq FROM queue_messages WHERE topic = ?1 AND NOT EXISTS (SELECT 1 FROM queue_subscriptions WHERE topic = ?1) LIMIT ${SWEEP_BATCH})`)

  /** the expired messages, batch by batch; returns how many */
  async function removeExpired(now: number): Promise<number> {
    let removed = 0
    const expiredByTopic = new Map<string, number>()
    for (;;) {
      if (closed()) return removed
      const rows = edb.transaction(() => deleteExpired.all(now)) as Array<{ topic: string }>
      for (const r of rows) expiredByTopic.set(r.topic, (expiredByTopic.get(r.topic) ?? 0) + 1)
      removed += rows.length
      if (rows.length < SWEEP_BATCH) break
      await nextSlice()
    }
    if (expiredByTopic.size > 0) {
      logger.warn({ expired: Object.fromEntries(expiredByTopic), retentionMs }, 'queue: messages nobody acknowledged within the retention period removed')
    }
    return removed
  }

  /** the idle undeclared subscriptions and their messages; returns how many messages */
  async function removeIdleSubscriptions(now: number): Promise<number> {
    let removed = 0
    const idleBefore = now - options.idleSubscriptionMs
    for (const { topic } of selectIdle.all(idleBefore) as Array<{ topic: string }>) {
      if (closed()) return removed
      if (deleteSubscription.run(topic, idleBefore).changes === 0) continue
      logger.info({ topic }, 'queue: subscription without consumers removed')
      for (;;) {
        const n = Number(edb.transaction(() => deleteTopicBatch.run(topic)).changes)
        removed += n
        if (n < SWEEP_BATCH || closed()) break
        await nextSlice()
      }
    }
    return removed
  }

  async function sweepOnce(): Promise<number> {
    const now = clock.now()
    for (const topic of options.consuming()) markActive.run(now, topic)
    const expired = await removeExpired(now)
    return expired + (await removeIdleSubscriptions(now))
  }

  let sweeping: Promise<number> | null = null
  function sweep(): Promise<number> {
    sweeping ??= sweepOnce().finally(() => {
      sweeping = null
    })
    return sweeping
  }
  const sweepSoon = () => {
    sweep().catch((err: unknown) => logger.warn({ err }, 'queue sweep failed'))
  }
  const sweepTimer = setInterval(sweepSoon, options.sweepIntervalMs ?? 60_000)
  sweepTimer.unref()
  // the first sweep soon after start: a folder that sat unused for a week has expired messages
  const firstSweep = setTimeout(sweepSoon, Math.min(1000, options.sweepIntervalMs ?? 1000))
  firstSweep.unref()

  return {
    sweep,
    stop() {
      clearInterval(sweepTimer)
      clearTimeout(firstSweep)
    },
    async finished() {
      await sweeping?.catch(() => 0)
    },
  }
}

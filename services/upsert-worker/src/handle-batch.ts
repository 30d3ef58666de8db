import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { HandlerResult, QueueMessage } from '@lsv/shared/ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES, deadLetterTopicOf, type Topic } from '@lsv/shared/model/topics.ts'
import { batchAttributes, deadLetterBody, decodeBatchMessage, InvalidBatchMessage, type DecodedBatch } from '@lsv/shared/domain/ingest/batch-message.ts'
import { upsertBatchRecords } from '@lsv/shared/domain/ingest/upsert.ts'
import type { BatchApplied } from '@lsv/shared/ports/listeners.ts'
import { tellListeners } from '@lsv/shared/domain/outcomes/tell.ts'

/**
 * A record the store failed to write is retried with its batch (nack; the rest of the batch is a
 * no-op on redelivery) until this delivery attempt, then reported and given up (dead letter).
 * Below the queue's own limit (5), so the batch itself never lands in the dead letters for it.
 */
export const RECORD_ATTEMPTS = 3

const DEAD_LETTER_TOPIC = deadLetterTopicOf('contact-batches') as Topic

type WorkerDeps = Pick<PlatformDeps, 'tenantLookups' | 'contacts' | 'queue' | 'logger' | 'listeners'>

/**
 * What a message parked here carries besides its own attributes: why, and the message and attempt
 * it came from, so the operator's `batch.dead_lettered` names the original message and a parking
 * repeated after a lost ack is the same event (domain/operations/dead-letter.ts).
 */
function parkedAttributes(message: QueueMessage, reason: string): Record<string, string> {
  return {
    [DEAD_LETTER_ATTRIBUTES.reason]: reason.slice(0, 200),
    [DEAD_LETTER_ATTRIBUTES.originalMessageId]: message.id,
    [DEAD_LETTER_ATTRIBUTES.attempts]: String(message.deliveryAttempt),
  }
}

/** One `contact-batches` message to the queue: apply it, then hand what it came to to every listener. */
export async function handleBatchMessage(deps: WorkerDeps, message: QueueMessage): Promise<HandlerResult> {
  const outcome = await applyBatchMessage(deps, message)
  if (outcome === 'retry') return 'nack'
  await tellListeners(deps.listeners.batch, deps, (l) => l.onBatchApplied(outcome, deps))
  return 'ack'
}

/**
 * What one `contact-batches` message came to (docs/ingestion.md): applied, unreadable, or to be retried.
 * - a message that can never be processed (format version, attributes, body) is logged, parked
 *   on `contact-batches-dead-letter` as it came, and acked;
 * - otherwise every anchored record is upserted with origin `<batch_id>:<index>`, so a redelivered
 *   or duplicated message writes nothing new;
 * - records that can never be stored (too large) are logged and dead-lettered at once; records the
 *   store failed to write are retried by redelivery, then dead-lettered at attempt RECORD_ATTEMPTS;
 *   when every record failed the store is the problem and the message is nacked (never dead-lettered here);
 * - what the batch came to is returned as BatchApplied (ports/listeners.ts), for the listeners
 *   composed at the root (platform/listeners.ts); the change rows went out with the writes
 *   (the contact-write seam).
 * Anything thrown (store or queue unavailable, a listener that fails its batch) is a nack: the
 * queue redelivers with backoff.
 */
async function applyBatchMessage(deps: WorkerDeps, message: QueueMessage): Promise<BatchApplied | 'retry'> {
  const log = deps.logger.child({ messageId: message.id, attempt: message.deliveryAttempt, batchId: message.attributes?.batch_id })
  let batch: DecodedBatch
  try {
    batch = decodeBatchMessage(message)
  } catch (err) {
    if (!(err instanceof InvalidBatchMessage)) throw err
    log.error({ event: 'dead_lettered', kind: 'message', err, reason: err.message }, 'batch message can never be processed: dead-lettered')
    await deps.queue.publish(DEAD_LETTER_TOPIC, message.data, { ...message.attributes, ...parkedAttributes(message, err.message) })
    return { kind: 'unreadable', accountId: message.attributes?.account_id, reason: err.message }
  }

  const result = await upsertBatchRecords(deps, batch, {
    // an earlier attempt may have stored records whose change rows were never published
    includeAlreadyApplied: message.deliveryAttempt > 1,
  })
  if (result.failed.length > 0) {
    const everyWriteFailed = result.failed.length === result.upserted
    if (everyWriteFailed || message.deliveryAttempt < RECORD_ATTEMPTS) {
      log.warn({ failed: result.failed.length, upserted: result.upserted, firstError: result.failed[0]!.error }, 'batch records failed to store: redelivery')
      return 'retry'
    }
  }

  const given = [...result.unstorable.map((k) => ({ k, reason: 'record too large to store' })), ...result.failed.map((f) => ({ k: f.index, reason: f.error }))]
  if (given.length > 0) {
    const records = given.map((g) => batch.records[g.k]!)
    const indexes = given.map((g) => batch.indexes[g.k]!)
    log.error(
      {
        event: 'dead_lettered',
        kind: 'records',
        records: given.length,
        indexes: indexes.slice(0, 20),
        reasons: [...new Set(given.map((g) => g.reason))].slice(0, 5),
      },
      'batch records can never be stored: dead-lettered',
    )
    await deps.queue.publish(DEAD_LETTER_TOPIC, deadLetterBody(batch.shape, records), {
      ...batchAttributes(batch, indexes),
      ...parkedAttributes(message, given[0]!.reason),
    })
  }
  const stored = result.outcomes.filter((o) => o.result !== 'failed')
  const unchanged = stored.filter((o) => o.result === 'unchanged' && o.written?.change !== 'reapplied').length
  return {
    kind: 'applied',
    accountId: batch.accountId,
    connectionId: batch.connectionId,
    batchId: batch.batchId,
    requestId: batch.requestId ?? null,
    receivedAt: batch.receivedAt,
    records: result.records,
    applied: stored.length - unchanged,
    unchanged,
    refused: [...result.refused, ...given.map((g) => ({ index: batch.indexes[g.k]!, external_id: null, field: null, value: null, reason: g.reason }))],
    deadLettered: { too_large: result.unstorable.length, store_failed: result.failed.length },
    changed: result.changed.length,
  }
}

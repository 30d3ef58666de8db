import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { HandlerResult, QueueMessage } from '@lsv/shared/ports/queue.ts'
import { DEAD_LETTER_ATTRIBUTES, deadLetterTopicOf, type Topic } from '@lsv/shared/model/topics.ts'
import { batchAttributes, deadLetterBody, decodeBatchMessage, InvalidBatchMessage, type DecodedBatch } from '@lsv/shared/domain/ingest/batch-message.ts'
import { publishChangeRows, upsertBatchRecords } from '@lsv/shared/domain/ingest/upsert.ts'
import { countDeadLetters } from '@lsv/shared/domain/activity/counts.ts'

/**
 * A record the store failed to write is retried with its batch (nack; the rest of the batch is a
 * no-op on redelivery) until this delivery attempt, then reported and given up (dead letter).
 * Below the queue's own limit (5), so the batch itself never lands in the dead letters for it.
 */
export const RECORD_ATTEMPTS = 3

const DEAD_LETTER_TOPIC = deadLetterTopicOf('contact-batches') as Topic

/** What became of a batch's records: stored, or refused for this reason. */
type RecordOutcomes = Record<'accepted' | 'no_external_id' | 'too_large' | 'store_failed', number>

/**
 * One line per outcome a batch's records had (none for an outcome no record had): the log-based
 * metric contact_records (infra/monitoring.tf) sums `records` by `outcome`. A counter metric can
 * only count lines, so the count travels in the line and the metric is a distribution of it.
 */
function logRecordOutcomes(log: PlatformDeps['logger'], outcomes: RecordOutcomes): void {
  for (const [outcome, records] of Object.entries(outcomes)) {
    if (records > 0) log.info({ event: 'contact_records', outcome, records }, 'contact records')
  }
}

type WorkerDeps = Pick<PlatformDeps, 'tenantLookups' | 'contacts' | 'queue' | 'logger' | 'rateLimiter' | 'clock'>

/**
 * One `contact-batches` message (docs/ingestion.md):
 * - a message that can never be processed (format version, attributes, body) is logged, parked
 *   on `contact-batches-dead-letter` as it came, and acked;
 * - otherwise every anchored record is upserted with origin `<batch_id>:<index>`, so a redelivered
 *   or duplicated message writes nothing new;
 * - records that can never be stored (too large) are logged and dead-lettered at once; records the
 *   store failed to write are retried by redelivery, then dead-lettered at attempt RECORD_ATTEMPTS;
 *   when every record failed the store is the problem and the message is nacked (never dead-lettered here);
 * - one change row per changed contact goes to `contact-changes`, then the message is acked.
 * Anything thrown (store or queue unavailable) is a nack: the queue redelivers with backoff.
 */
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

export async function handleBatchMessage(deps: WorkerDeps, message: QueueMessage): Promise<HandlerResult> {
  const log = deps.logger.child({ messageId: message.id, attempt: message.deliveryAttempt, batchId: message.attributes?.batch_id })
  let batch: DecodedBatch
  try {
    batch = decodeBatchMessage(message)
  } catch (err) {
    if (!(err instanceof InvalidBatchMessage)) throw err
    log.error({ event: 'dead_lettered', kind: 'message', err, reason: err.message }, 'batch message can never be processed: dead-lettered')
    await deps.queue.publish(DEAD_LETTER_TOPIC, message.data, { ...message.attributes, ...parkedAttributes(message, err.message) })
    // a message that cannot be read counts as one (its records cannot be counted either)
    await countDeadLetters(deps, message.attributes?.account_id, 'unreadable', 1)
    return 'ack'
  }

  const result = await upsertBatchRecords(deps, batch, {
    // an earlier attempt may have stored records whose change rows were never published
    includeAlreadyApplied: message.deliveryAttempt > 1,
  })
  if (result.failed.length > 0) {
    const everyWriteFailed = result.failed.length === result.upserted
    if (everyWriteFailed || message.deliveryAttempt < RECORD_ATTEMPTS) {
      log.warn({ failed: result.failed.length, upserted: result.upserted, firstError: result.failed[0]!.error }, 'batch records failed to store: redelivery')
      return 'nack'
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
    await countDeadLetters(deps, batch.accountId, 'too_large', result.unstorable.length)
    await countDeadLetters(deps, batch.accountId, 'store_failed', result.failed.length)
  }

  await publishChangeRows(deps, result.changed, batch.receivedAt)
  logRecordOutcomes(log, {
    accepted: result.upserted - result.failed.length,
    no_external_id: result.withoutAnchor,
    too_large: result.unstorable.length,
    store_failed: result.failed.length,
  })
  log.info(
    {
      event: 'contact_batch',
      // push-to-visible: from the edge's 202 to the records stored and their change rows
      // published, retries and redeliveries included (the metric contact_apply_lag)
      lagMs: Math.max(0, deps.clock.now() - Date.parse(batch.receivedAt)),
      records: result.records,
      upserted: result.upserted,
      withoutAnchor: result.withoutAnchor,
      changed: result.changed.length,
      deadLettered: given.length,
    },
    'batch upserted',
  )
  return 'ack'
}

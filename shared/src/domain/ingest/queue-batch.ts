import type { PlatformDeps } from '../../ports/deps.ts'
import { AppError } from '../../errors/app-error.ts'
import { isoAt } from '../../model/clock.ts'
import type { ConnectionRecord, FieldMapping } from '../../model/records.ts'
import { batchAttributes, newBatchMeta, type BatchMeta, type DecodedBatch } from './batch-message.ts'
import { createRecordMapper, partnerCrmContactId, type InboundRecord, type RecordMapper } from './mapping.ts'
import type { BatchShape } from './push-body.ts'

const NO_MAPPINGS: readonly FieldMapping[] = []
/**
 * A connection's compiled mappings, per mappings list: the lookup cache hands every push of a
 * connection the same record (and list) until it is read again, and compiling them for each push
 * was 1 % of a small push's CPU. Held weakly: a list no cached connection holds any more goes.
 */
const anchorMappers = new WeakMap<readonly FieldMapping[], RecordMapper>()
function anchorMapperOf(mappings: readonly FieldMapping[]): RecordMapper {
  let mapper = anchorMappers.get(mappings)
  if (!mapper) anchorMappers.set(mappings, (mapper = createRecordMapper(mappings)))
  return mapper
}

/**
 * `accepted` of the 202 (docs/ingestion.md): the records that carry an idempotency anchor, an
 * `external_id` found the way the worker finds it (the connection's mapping to `external_id`, or
 * the record's own `external_id` key). Records without one are never stored.
 */
export function countAccepted(shape: BatchShape, connection: ConnectionRecord, records: readonly InboundRecord[]): number {
  if (shape === 'partnercrm') return records.length > 0 && partnerCrmContactId(records[0]!) !== null ? 1 : 0
  const mapper = anchorMapperOf(connection.field_mappings ?? NO_MAPPINGS)
  let n = 0
  for (const r of records) if (mapper.anchorOf(r) !== null) n++
  return n
}

/** A batch ready to publish: its attributes and the body bytes as received (not its parsed records: see accept.ts checkPush) */
export interface PendingBatch {
  meta: BatchMeta
  raw: Buffer
}

export function pendingBatch(
  deps: Pick<PlatformDeps, 'clock'>,
  shape: BatchShape,
  connection: ConnectionRecord,
  raw: Buffer,
  locationId?: string,
  requestId?: string,
): PendingBatch {
  const meta = newBatchMeta({
    shape,
    accountId: connection.account_id,
    connectionId: connection.id,
    // contract 4.5: a partner CRM contact id is an external_id of source `partnercrm`
    source: shape === 'partnercrm' ? 'partnercrm' : connection.source,
    receivedAt: isoAt(deps.clock),
    ...(locationId !== undefined ? { locationId } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  })
  return { meta, raw }
}

/**
 * Publishes the received bytes as one `contact-batches` message. Resolves once the queue holds
 * it durably; a refusal is 503 `temporarily unavailable` (retry is safe, contract 7.5), never a
 * 202 for a batch that is not queued.
 */
export async function queueBatch(deps: Pick<PlatformDeps, 'queue'>, batch: PendingBatch): Promise<string> {
  try {
    return await deps.queue.publish('contact-batches', batch.raw, batchAttributes(batch.meta))
  } catch (cause) {
    throw new AppError('temporarily_unavailable', { cause })
  }
}

/** The pending batch as the worker would decode it, given its records (the synchronous fallback path). */
export function asDecoded(batch: PendingBatch, records: InboundRecord[]): DecodedBatch {
  return { ...batch.meta, records, indexes: records.map((_, i) => i) }
}

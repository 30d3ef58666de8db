import type { PlatformDeps } from '../../ports/deps.ts'
import type { ConnectionRecord } from '../../model/records.ts'
import { AppError, isAppError } from '../../errors/app-error.ts'
import { createRecordMapper, partnerCrmMappings, partnerCrmRecord, type InboundRecord } from './mapping.ts'
import { LISTENED_RECORDS, recordsOf, type BatchShape } from './push-body.ts'
import { asDecoded, countAccepted, pendingBatch, queueBatch, type PendingBatch } from './queue-batch.ts'
import { MAX_RECORD_BYTES, upsertBatchRecords } from './upsert.ts'
import type { PushAccepted, PushUpsertedSync } from '../../contract/push.ts'

export interface PushInput {
  shape: BatchShape
  connection: ConnectionRecord
  /** the body bytes as received (request.rawBody) */
  raw: Buffer
  /** the parsed body */
  body: unknown
  locationId?: string
}

/** the request's deps (http/request-deps.ts): with its request id, which the batch carries to the worker */
type PushDeps = Pick<PlatformDeps, 'clock' | 'queue' | 'tenantLookups' | 'contacts' | 'logger'> & { requestId?: string }

/**
 * A push body checked and counted: what its answer, its publish and its listeners need, and no
 * more. The parsed body is not part of it: an 8 MiB batch parses to about its size again, and
 * while its publish is awaited (an fsync, or Pub/Sub's answer) a push holds only its bytes and
 * its first LISTENED_RECORDS records (docs/performance.md, "Fourth pass: the 8 MiB batch").
 */
export interface CheckedPush {
  shape: BatchShape
  /** `accepted` of the 202 */
  accepted: number
  batch: PendingBatch
  /** the first LISTENED_RECORDS records as parsed: what the push's listeners read */
  records: readonly InboundRecord[]
}

/**
 * Checks the body (400 / 413; a partner CRM record the worker could never store: 400) and counts
 * `accepted`. Nothing of the parsed body is kept but CheckedPush.records: a caller that drops
 * the body once this settles holds only the bytes while it queues them.
 */
export async function checkPush(deps: PushDeps, input: PushInput): Promise<CheckedPush> {
  const records = recordsOf(input.body, input.shape)
  if (input.shape === 'partnercrm') await refuseUnstorable(deps, input.connection, records)
  return {
    shape: input.shape,
    accepted: countAccepted(input.shape, input.connection, records),
    batch: pendingBatch(deps, input.shape, input.connection, input.raw, input.locationId, deps.requestId),
    records: records.length <= LISTENED_RECORDS ? records : records.slice(0, LISTENED_RECORDS),
  }
}

/** The edge answer: publishes the received bytes (503 when the queue refuses), then `{ok, accepted, queued: true}`. */
export async function queuePush(deps: Pick<PlatformDeps, 'queue'>, push: CheckedPush): Promise<PushAccepted> {
  await queueBatch(deps, push.batch)
  return { ok: true, accepted: push.accepted, queued: true }
}

/**
 * A partner CRM push is one record: one the worker could never store (its mapped values over
 * MAX_RECORD_BYTES, Firestore's document cap) is refused here, 400 `invalid payload` (the
 * contract's text; its envelope names no field, so the log does), instead of being queued into a
 * dead letter and a signed `batch.dead_lettered` to the operator (issue 31: a token-less caller
 * could send 120 a minute per location).
 */
async function refuseUnstorable(deps: PushDeps, connection: ConnectionRecord, records: readonly InboundRecord[]): Promise<void> {
  const definitions = await deps.tenantLookups.listCustomFields(connection.account_id)
  const mapper = createRecordMapper(partnerCrmMappings(connection.field_mappings ?? []), definitions)
  for (const raw of records) {
    const record = partnerCrmRecord(raw)
    if (mapper.map(record).approxBytes <= MAX_RECORD_BYTES) continue
    const largest = Object.entries(record)
      .map(([field, v]) => ({ field, bytes: JSON.stringify(v)?.length ?? 0 }))
      .sort((a, b) => b.bytes - a.bytes)[0]
    deps.logger.warn({ connectionId: connection.id, field: largest?.field, bytes: largest?.bytes }, 'partner CRM record too large to store: refused')
    throw new AppError('invalid_payload')
  }
}

/**
 * The origin fallbacks' answer: like checkPush and queuePush, but when the queue refuses the batch it is
 * upserted here and now, and the answer is 200 with what happened. Only when that fails too is
 * the answer 503. Change rows of a synchronous upsert are published best effort (the queue just
 * refused a publish); a missing one is logged.
 */
export async function acceptPushOrUpsert(
  deps: PushDeps,
  input: PushInput,
): Promise<{ status: 202; body: PushAccepted } | { status: 200; body: PushUpsertedSync }> {
  const records = recordsOf(input.body, input.shape)
  const accepted = countAccepted(input.shape, input.connection, records)
  const pending = pendingBatch(deps, input.shape, input.connection, input.raw, input.locationId, deps.requestId)
  try {
    await queueBatch(deps, pending)
    return { status: 202, body: { ok: true, accepted, queued: true } }
  } catch (err) {
    if (!isAppError(err) || err.code !== 'temporarily_unavailable') throw err
    deps.logger.warn({ err: err.cause, batchId: pending.meta.batchId }, 'queue refused a fallback batch: upserting synchronously')
    const result = await upsertBatchRecords(deps, asDecoded(pending, records), {
      // the change rows (published by the contact-write seam's change feed) are best effort here:
      // the queue just refused a publish, and the records are stored
      onReactionFailed: (cause) => deps.logger.error({ err: cause, batchId: pending.meta.batchId }, 'change rows of a synchronous upsert not published'),
    }).catch((cause: unknown) => {
      deps.logger.error({ err: cause, batchId: pending.meta.batchId }, 'synchronous upsert failed')
      throw err
    })
    const failed = result.failed.length + result.unstorable.length
    return { status: 200, body: { ok: true, accepted, queued: false, upserted: result.upserted - result.failed.length, failed } }
  }
}

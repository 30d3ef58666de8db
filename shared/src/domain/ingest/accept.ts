import type { PlatformDeps } from '../../ports/deps.ts'
import type { ConnectionRecord } from '../../model/records.ts'
import { isAppError } from '../../errors/app-error.ts'
import { recordsOf, type BatchShape } from './push-body.ts'
import { asDecoded, countAccepted, pendingBatch, queueBatch } from './queue-batch.ts'
import { upsertBatchRecords } from './upsert.ts'
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
 * The edge answer: check the body (400 / 413), count `accepted`, publish the received bytes
 * (503 when the queue refuses) and answer `{ok, accepted, queued: true}`.
 */
export async function acceptPush(deps: PushDeps, input: PushInput): Promise<PushAccepted> {
  const records = recordsOf(input.body, input.shape)
  const accepted = countAccepted(input.shape, input.connection, records)
  await queueBatch(deps, pendingBatch(deps, input.shape, input.connection, input.raw, records, input.locationId, deps.requestId))
  return { ok: true, accepted, queued: true }
}

/**
 * The origin fallbacks' answer: like acceptPush, but when the queue refuses the batch it is
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
  const pending = pendingBatch(deps, input.shape, input.connection, input.raw, records, input.locationId, deps.requestId)
  try {
    await queueBatch(deps, pending)
    return { status: 202, body: { ok: true, accepted, queued: true } }
  } catch (err) {
    if (!isAppError(err) || err.code !== 'temporarily_unavailable') throw err
    deps.logger.warn({ err: err.cause, batchId: pending.meta.batchId }, 'queue refused a fallback batch: upserting synchronously')
    const result = await upsertBatchRecords(deps, asDecoded(pending), {
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

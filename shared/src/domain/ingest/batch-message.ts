import { randomUUID } from 'node:crypto'
import type { QueueMessage } from '../../ports/queue.ts'
import { parseJsonBody } from '../../lib/json.ts'
import { recordsOf } from './push-body.ts'
import type { InboundRecord } from './mapping.ts'
import { BATCH_MESSAGE_VERSION, BatchMessageAttributes, type BatchShape } from '../../contract/messages.ts'
import { messageCheck } from '../../contract/message-check.ts'

/**
 * The `contact-batches` message (docs/ingestion.md, "Message format").
 *
 * data: the request body bytes exactly as received (the edge never serializes a batch again).
 * attributes (all strings; their schema is BatchMessageAttributes in contract/messages.ts):
 *   v            `1`: the format version; a consumer refuses any other
 *   shape        `contacts` | `events` | `partnercrm`: how to read the body (push-body.ts)
 *   account_id   the tenant
 *   connection_id the connection whose field mappings apply (read when the batch is upserted)
 *   source       the `source` of the (source, external_id) anchor
 *   received_at  ISO instant the edge accepted the batch: the event time of every write in it
 *   batch_id     uuid; record i is written with origin `<batch_id>:<i>`, so a redelivery is a no-op
 *   location_id  partner CRM only: the location the call came for
 *   request_id   optional: the push's request id, so the worker's refusals reach its inbound debugger entry
 *   indexes      dead letters only: the original positions of the records the body still holds
 */
const checkAttributes = messageCheck(BatchMessageAttributes)

export interface BatchMeta {
  shape: BatchShape
  accountId: string
  connectionId: string
  source: string
  receivedAt: string
  batchId: string
  locationId?: string
  /** the push's request id (the inbound debugger's entry names it) */
  requestId?: string
}

export interface DecodedBatch extends BatchMeta {
  records: InboundRecord[]
  /** the position of each record in the batch as received (its origin suffix) */
  indexes: number[]
}

/** A message that can never be processed (wrong version, missing attribute, body not a batch). */
export class InvalidBatchMessage extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options)
    this.name = 'InvalidBatchMessage'
  }
}

export function newBatchMeta(input: Omit<BatchMeta, 'batchId'> & { batchId?: string }): BatchMeta {
  return { ...input, batchId: input.batchId ?? randomUUID() }
}

export function batchAttributes(meta: BatchMeta, indexes?: readonly number[]): BatchMessageAttributes {
  const attributes: BatchMessageAttributes = {
    v: BATCH_MESSAGE_VERSION,
    shape: meta.shape,
    account_id: meta.accountId,
    connection_id: meta.connectionId,
    source: meta.source,
    received_at: meta.receivedAt,
    batch_id: meta.batchId,
  }
  if (meta.locationId !== undefined) attributes.location_id = meta.locationId
  if (meta.requestId !== undefined) attributes.request_id = meta.requestId
  if (indexes) attributes.indexes = indexes.join(',')
  return attributes
}

/** Parses and validates a batch message; throws InvalidBatchMessage when it can never be processed. */
export function decodeBatchMessage(message: Pick<QueueMessage, 'data' | 'attributes'>): DecodedBatch {
  const given = message.attributes ?? {}
  if (given.v !== BATCH_MESSAGE_VERSION) throw new InvalidBatchMessage(`unsupported message version ${JSON.stringify(given.v ?? null)}`)
  const checked = checkAttributes(given)
  if (!checked.ok) throw new InvalidBatchMessage(`attributes: ${checked.reason}`)
  const a = checked.value
  const shape = a.shape
  let records: InboundRecord[]
  try {
    // the record cap is an answer to a caller; a queued batch of any size is processed
    records = recordsOf(parseJsonBody(message.data), shape, Number.POSITIVE_INFINITY)
  } catch (cause) {
    throw new InvalidBatchMessage('body is not a batch of this shape', { cause })
  }
  let indexes = records.map((_, i) => i)
  if (a.indexes !== undefined) {
    const parsed = a.indexes.split(',').map(Number)
    if (parsed.length !== records.length || parsed.some((n) => !Number.isInteger(n) || n < 0)) {
      throw new InvalidBatchMessage('indexes do not match the records')
    }
    indexes = parsed
  }
  return {
    shape,
    accountId: a.account_id,
    connectionId: a.connection_id,
    source: a.source,
    receivedAt: a.received_at,
    batchId: a.batch_id,
    ...(a.location_id ? { locationId: a.location_id } : {}),
    ...(a.request_id ? { requestId: a.request_id } : {}),
    records,
    indexes,
  }
}

/** The body of a dead letter holding some records of a batch, in the batch's own shape. */
export function deadLetterBody(shape: BatchShape, records: readonly InboundRecord[]): Buffer {
  if (shape === 'partnercrm') return Buffer.from(JSON.stringify(records[0] ?? {}))
  if (shape === 'events') return Buffer.from(JSON.stringify({ events: records.map((resolution) => ({ resolution })) }))
  return Buffer.from(JSON.stringify({ contacts: records }))
}

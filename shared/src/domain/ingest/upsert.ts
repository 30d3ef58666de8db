import type { DomainLogger, PlatformDeps } from '../../ports/deps.ts'
import type { ContactRecord, ContactUpsertInput, WriterClass } from '../../model/records.ts'
import type { MergeFn, UpsertOutcome } from '../../ports/contact-store.ts'
import { mergeContact } from '../contacts/merge.ts'
import { ContactReactionFailed } from '../contacts/write-seam.ts'
import { sortKeysDeep } from '../../contract/canonical-json.ts'
import { createRecordMapper, partnerCrmMappings, partnerCrmRecord, type InboundRecord } from './mapping.ts'
import type { DecodedBatch } from './batch-message.ts'
import type { Refusal } from '../../ports/push-log.ts'

/**
 * Upserting one decoded batch: map every record, upsert the anchored ones with `mergeContact`,
 * collect the contacts that changed. Shared by the upsert worker (queued batches) and the origin
 * fallbacks' synchronous path (queue unavailable).
 *
 * Writer class: an inbound push is `manual` (docs/ingestion.md): the tenant's own system states
 * the person's name, above enrichment and provider data, below a form the person filled in.
 */
const INBOUND_WRITER: WriterClass = 'manual'

/**
 * Firestore refuses a document over 1 MiB; a record whose mapped values alone come near it can
 * never be stored and goes to the dead-letter topic instead of being retried.
 */
export const MAX_RECORD_BYTES = 900 * 1024

export interface BatchUpsertResult {
  /** records in the batch */
  records: number
  /** anchored records sent to the store */
  upserted: number
  /** records without an anchor: never stored (not counted in the push's `accepted` either) */
  withoutAnchor: number
  /** records without an anchor, and values of stored records that were not stored, with why */
  refused: Refusal[]
  /** batch positions of records that can never be stored (too large) */
  unstorable: number[]
  /** batch positions of records the store failed to write, with the error */
  failed: Array<{ index: number; error: string }>
  /** contacts this batch changed, as stored (each also reached the change feed through the contact-write seam) */
  changed: ContactRecord[]
  outcomes: UpsertOutcome[]
}

export interface BatchUpsertOptions {
  /**
   * also report contacts the store found unchanged when they carry a write of this batch (a
   * redelivery after an earlier attempt stored them): their change rows may not have been
   * published yet
   */
  includeAlreadyApplied?: boolean
  onProgress?: (done: number) => void
  /**
   * the records are stored but a reaction to the write failed (contact-write seam): without this
   * the call rejects (the batch is retried); with it, the failure is handed here and the result returned
   */
  onReactionFailed?: (cause: unknown) => void
}

/** The upsert inputs of a batch, with the positions of the records that produced them. */
export async function buildUpsertInputs(
  deps: Pick<PlatformDeps, 'tenantLookups'>,
  batch: DecodedBatch,
  logger?: DomainLogger,
): Promise<{ inputs: ContactUpsertInput[]; positions: number[]; withoutAnchor: number; unstorable: number[]; refused: Refusal[] }> {
  const [connection, definitions] = await Promise.all([
    deps.tenantLookups.getConnection(batch.connectionId),
    deps.tenantLookups.listCustomFields(batch.accountId),
  ])
  if (!connection) logger?.warn({ connectionId: batch.connectionId, batchId: batch.batchId }, 'connection of a queued batch is gone: fallback extraction')
  const own = connection?.account_id === batch.accountId ? (connection.field_mappings ?? []) : []
  const mapper = createRecordMapper(batch.shape === 'partnercrm' ? partnerCrmMappings(own) : own, definitions)
  const inputs: ContactUpsertInput[] = []
  const positions: number[] = []
  const unstorable: number[] = []
  const refused: Refusal[] = []
  let withoutAnchor = 0
  batch.records.forEach((raw: InboundRecord, k) => {
    const record = batch.shape === 'partnercrm' ? partnerCrmRecord(raw) : raw
    const mapped = mapper.map(record)
    if (mapped.externalId === null) {
      withoutAnchor++
      refused.push({ index: batch.indexes[k]!, external_id: null, field: null, value: null, reason: 'no external_id' })
      return
    }
    for (const r of mapped.refused) refused.push({ index: batch.indexes[k]!, external_id: mapped.externalId, ...r })
    if (mapped.approxBytes > MAX_RECORD_BYTES) {
      unstorable.push(k)
      return
    }
    inputs.push({
      source: batch.source,
      external_id: mapped.externalId,
      writer: INBOUND_WRITER,
      at: batch.receivedAt,
      origin: `${batch.batchId}:${batch.indexes[k]}`,
      patch: mapped.patch,
    })
    positions.push(k)
  })
  return { inputs, positions, withoutAnchor, unstorable, refused }
}

export async function upsertBatchRecords(
  deps: Pick<PlatformDeps, 'tenantLookups' | 'contacts' | 'logger'>,
  batch: DecodedBatch,
  options: BatchUpsertOptions = {},
): Promise<BatchUpsertResult> {
  const { inputs, positions, withoutAnchor, unstorable, refused } = await buildUpsertInputs(deps, batch, deps.logger)
  // keys in one order whatever order the writes arrived in: replays converge byte for byte
  const canonical: MergeFn = (existing, input, accountId) => {
    const next = mergeContact(existing, input, accountId)
    return next ? sortKeysDeep(next) : null
  }
  let outcomes: UpsertOutcome[] = []
  if (inputs.length > 0) {
    const storeOptions = {
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.includeAlreadyApplied ? { recheckApplied: true } : {}),
    }
    try {
      outcomes = await deps.contacts.upsertBatch(batch.accountId, inputs, canonical, storeOptions)
    } catch (err) {
      if (!(err instanceof ContactReactionFailed) || !options.onReactionFailed) throw err
      options.onReactionFailed(err.cause)
      outcomes = err.outcomes
    }
  }
  const failed: BatchUpsertResult['failed'] = []
  const changed = new Map<string, ContactRecord>()
  outcomes.forEach((o, i) => {
    if (o.result === 'failed') failed.push({ index: positions[i]!, error: o.error ?? 'write failed' })
    if (o.written) changed.set(o.contactId, o.written.contact)
  })
  return { records: batch.records.length, upserted: inputs.length, withoutAnchor, unstorable, refused, failed, changed: [...changed.values()], outcomes }
}

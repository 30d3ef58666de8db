import type { DomainLogger, PlatformDeps } from '../../ports/deps.ts'
import type { ContactRecord, ContactUpsertInput, WriterClass } from '../../model/records.ts'
import type { MergeFn, UpsertOutcome } from '../../ports/contact-store.ts'
import { mergeContact } from '../contacts/merge.ts'
import { changeRowAttributes, toChangeRow } from '../contacts/change-row.ts'
import { sortKeysDeep } from '../../contract/canonical-json.ts'
import { createRecordMapper, partnerCrmMappings, partnerCrmRecord, type InboundRecord } from './mapping.ts'
import type { DecodedBatch } from './batch-message.ts'

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
const MAX_RECORD_BYTES = 900 * 1024

const CHANGE_ROWS_PER_SLICE = 500

/** reads in flight when a redelivery looks for contacts an earlier attempt already wrote */
const RECHECK_READS_IN_FLIGHT = 200

export interface BatchUpsertResult {
  /** records in the batch */
  records: number
  /** anchored records sent to the store */
  upserted: number
  /** records without an anchor: never stored (not counted in the push's `accepted` either) */
  withoutAnchor: number
  /** batch positions of records that can never be stored (too large) */
  unstorable: number[]
  /** batch positions of records the store failed to write, with the error */
  failed: Array<{ index: number; error: string }>
  /** contacts this batch changed, as stored */
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
}

/** The upsert inputs of a batch, with the positions of the records that produced them. */
export async function buildUpsertInputs(
  deps: Pick<PlatformDeps, 'tenantLookups'>,
  batch: DecodedBatch,
  logger?: DomainLogger,
): Promise<{ inputs: ContactUpsertInput[]; positions: number[]; withoutAnchor: number; unstorable: number[] }> {
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
  let withoutAnchor = 0
  batch.records.forEach((raw: InboundRecord, k) => {
    const record = batch.shape === 'partnercrm' ? partnerCrmRecord(raw) : raw
    const mapped = mapper.map(record)
    if (mapped.externalId === null) {
      withoutAnchor++
      return
    }
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
  return { inputs, positions, withoutAnchor, unstorable }
}

/** Whether a stored contact holds a write with one of these origins (see merge.ts versions). */
function carriesOrigin(record: ContactRecord, origins: ReadonlySet<string>): boolean {
  for (const v of Object.values(record.versions ?? {})) {
    const origin = v.slice(v.lastIndexOf('|') + 1)
    if (origins.has(origin)) return true
  }
  return false
}

export async function upsertBatchRecords(
  deps: Pick<PlatformDeps, 'tenantLookups' | 'contacts' | 'logger'>,
  batch: DecodedBatch,
  options: BatchUpsertOptions = {},
): Promise<BatchUpsertResult> {
  const { inputs, positions, withoutAnchor, unstorable } = await buildUpsertInputs(deps, batch, deps.logger)
  // the record each document ends up as: the last non-null merge of its group wins
  const merged = new Map<string, ContactRecord>()
  const capture: MergeFn = (existing, input, accountId) => {
    const next = mergeContact(existing, input, accountId)
    if (!next) return null
    // keys in one order whatever order the writes arrived in: replays converge byte for byte
    const canonical = sortKeysDeep(next)
    merged.set(canonical.id, canonical)
    return canonical
  }
  const outcomes = inputs.length > 0 ? await deps.contacts.upsertBatch(batch.accountId, inputs, capture, { onProgress: options.onProgress }) : []
  const changedIds = new Set<string>()
  const unchanged = new Map<string, Set<string>>()
  const failed: BatchUpsertResult['failed'] = []
  outcomes.forEach((o, i) => {
    if (o.result === 'created' || o.result === 'updated') changedIds.add(o.contactId)
    else if (o.result === 'failed') failed.push({ index: positions[i]!, error: o.error ?? 'write failed' })
    else if (options.includeAlreadyApplied) {
      const set = unchanged.get(o.contactId) ?? new Set<string>()
      set.add(inputs[i]!.origin)
      unchanged.set(o.contactId, set)
    }
  })
  const changed = [...changedIds].map((id) => merged.get(id)).filter((r): r is ContactRecord => r !== undefined)
  const recheck = [...unchanged].filter(([id]) => !changedIds.has(id))
  for (let i = 0; i < recheck.length; i += RECHECK_READS_IN_FLIGHT) {
    const slice = recheck.slice(i, i + RECHECK_READS_IN_FLIGHT)
    const stored = await Promise.all(slice.map(([id]) => deps.contacts.get(batch.accountId, id)))
    stored.forEach((r, k) => {
      if (r && carriesOrigin(r, slice[k]![1])) changed.push(r)
    })
  }
  return { records: batch.records.length, upserted: inputs.length, withoutAnchor, unstorable, failed, changed, outcomes }
}

/**
 * One `contact-changes` message per changed contact: the flat change row (change-row.ts) as
 * JSON, which the BigQuery subscription writes as one row. Rejects when any publish fails.
 */
export async function publishChangeRows(deps: Pick<PlatformDeps, 'queue'>, records: readonly ContactRecord[], at: string): Promise<void> {
  // in slices: the embedded queue commits a slice's publishes together (one commit, one WAL sync),
  // and 10,000 in one turn would hold the event loop (health checks, lease renewals) for one long
  // transaction; Pub/Sub batches each slice
  for (let i = 0; i < records.length; i += CHANGE_ROWS_PER_SLICE) {
    await Promise.all(
      records.slice(i, i + CHANGE_ROWS_PER_SLICE).map((r) => {
        const row = toChangeRow(r, at)
        return deps.queue.publish('contact-changes', Buffer.from(JSON.stringify(row)), changeRowAttributes(row))
      }),
    )
    if (i + CHANGE_ROWS_PER_SLICE < records.length) await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

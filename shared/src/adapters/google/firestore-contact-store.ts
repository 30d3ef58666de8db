import { FieldPath, FieldValue } from '@google-cloud/firestore'
import type { BulkWriter, DocumentReference, DocumentSnapshot, Firestore, Timestamp } from '@google-cloud/firestore'
import type { ContactRecord, ContactUpsertInput } from '../../model/records.ts'
import { contactIdFor } from '../../model/ids.ts'
import type { ContactStore, MergeFn, UpsertBatchOptions, UpsertOutcome } from '../../ports/contact-store.ts'
import { applyGroup, DOCS_PER_CHUNK, errorText, failWrites, groupByDocument, type DocGroup } from '../contact-upsert.ts'
import { backoff, isConflict } from './grpc-codes.ts'

/**
 * Layout: `accounts/{accountId}/contacts/{contactId}` holds the ContactRecord as the document
 * (maps such as custom_fields and versions are stored as map values, so keys with dots are fine);
 * link tokens are their own port (firestore-link-tokens.ts).
 *
 * Queries use single-field indexes only (automatic): equality on `identity.network_url` or
 * `business_email` inside one account's subcollection (ordered by document id implicitly), and
 * the document-id keyset of `list`.
 *
 * upsertBatch is a read-merge-write with optimistic concurrency: each chunk of documents is read
 * with one `getAll`, merged in memory, and written through a BulkWriter with a precondition
 * (`create` for a new document, `update` with `lastUpdateTime` for an existing one). A concurrent
 * writer makes the precondition fail; that document alone is re-read, re-merged and retried.
 * Reading chunk n+1 overlaps with the writes of chunk n. When the first chunk holds no existing
 * document, later chunks skip the read and create blindly (see upsertBatch).
 */

/** attempts per document, the first included; 30 writers racing on one document need at most 30 */
const MAX_ATTEMPTS = 40
const BACKOFF_BASE_MS = 5
const BACKOFF_CAP_MS = 500

const retryWait = (attempt: number) => backoff(attempt, BACKOFF_BASE_MS, BACKOFF_CAP_MS)

/**
 * The store's one BulkWriter's throttle. The writer lives as long as the store, so its ramp
 * (+50 % every 5 minutes, Firestore's 500/50/5 guidance) carries on across batches; a writer per
 * batch started again at 500 writes/s every time, so a 10,000-record batch took at least 20 s
 * whatever the database could take. It starts at 2,000 writes/s: what the four batches an
 * upsert-worker instance runs at once (infra/cloud-run.tf, concurrency 4) started at together
 * with a writer each, so no instance starts faster than before; contact ids are hashes, so the
 * writes spread over the key space. It stops ramping at 10,000 writes/s, a database's
 * write guidance before it ramps further (docs/capacity.md).
 */
export const CONTACT_WRITER_THROTTLING = { initialOpsPerSecond: 2000, maxOpsPerSecond: 10_000 } as const

/**
 * Firestore rejects `undefined`; a merged record may carry it in optional fields. Returns the
 * value itself when it holds none (the common case: no copy), a pruned copy otherwise.
 */
function withoutUndefined<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null
    for (let i = 0; i < value.length; i++) {
      const v = value[i]
      const clean = v === undefined ? null : withoutUndefined(v)
      if (clean !== v && !copy) copy = value.slice(0, i)
      if (copy) copy.push(clean)
    }
    return (copy ?? value) as T
  }
  let copy: Record<string, unknown> | null = null
  const entries = Object.entries(value as Record<string, unknown>)
  for (let i = 0; i < entries.length; i++) {
    const [k, v] = entries[i]!
    const clean = v === undefined ? undefined : withoutUndefined(v)
    if (clean !== v || v === undefined) {
      if (!copy) copy = Object.fromEntries(entries.slice(0, i))
    }
    if (copy && clean !== undefined) copy[k] = clean
  }
  return (copy ?? value) as T
}

/** top-level fields of an existing document the new record no longer has are deleted explicitly */
function updateData(next: ContactRecord, existing: Record<string, unknown>): Record<string, unknown> {
  const data: Record<string, unknown> = withoutUndefined(next) as unknown as Record<string, unknown>
  let out = data
  for (const key of Object.keys(existing)) {
    if (!(key in data)) {
      if (out === data) out = { ...data }
      out[key] = FieldValue.delete()
    }
  }
  return out
}

interface DocState {
  group: DocGroup
  ref: DocumentReference
}

/** chunks whose reads may be in flight at once */
const READ_AHEAD = 4

/** One upsertBatch call: where its documents go, what it merges, and where each record's outcome is put. */
interface BatchContext {
  firestore: Firestore
  accountId: string
  inputs: readonly ContactUpsertInput[]
  merge: MergeFn
  writer: BulkWriter
  results: UpsertOutcome[]
}

/**
 * One attempt for a set of documents: read them with one getAll, merge, enqueue the conditional
 * writes. Resolves once the writes are enqueued; `settled` then yields the documents whose
 * precondition failed (to be retried). Wrapped in an object so the inner promise is not awaited.
 */
async function readAndEnqueue(
  batch: BatchContext,
  docs: DocState[],
  lastAttempt: boolean,
  blind = false,
): Promise<{ settled: Promise<DocState[]>; existing: number }> {
  const { accountId, inputs, merge, writer, results } = batch
  // blind: no read, every document is created (a `create` precondition) as if new; one that
  // exists after all fails with ALREADY_EXISTS and takes the read-merge-update retry
  const snaps: Array<DocumentSnapshot | null> = blind ? docs.map(() => null) : await batch.firestore.getAll(...docs.map((d) => d.ref))
  const writes: Array<Promise<DocState | null>> = []
  let existingCount = 0
  for (let i = 0; i < docs.length; i++) {
    const doc = docs[i]!
    const snap = snaps[i]!
    const existing = snap?.exists ? (snap.data() as ContactRecord) : null
    if (existing) existingCount++
    const { next, outcomes } = applyGroup(accountId, doc.group, existing, inputs, merge)
    const settle = (list: UpsertOutcome[]) =>
      doc.group.indexes.forEach((index, k) => {
        results[index] = list[k]!
      })
    settle(outcomes)
    if (!next) continue
    const op = existing
      ? writer.update(doc.ref, updateData(next, existing as unknown as Record<string, unknown>), { lastUpdateTime: snap!.updateTime as Timestamp })
      : writer.create(doc.ref, withoutUndefined(next))
    writes.push(
      op.then(
        () => null,
        (err: unknown) => {
          if (isConflict(err) && !lastAttempt) return doc
          settle(failWrites(outcomes, isConflict(err) ? `concurrent updates: gave up after ${MAX_ATTEMPTS} attempts` : errorText(err)))
          return null
        },
      ),
    )
  }
  // partial batches are only sent on flush (it does not wait for later enqueues)
  writer.flush().catch(() => {})
  return { settled: Promise.all(writes).then((list) => list.filter((d): d is DocState => d !== null)), existing: existingCount }
}

/**
 * Upserts the batch's documents chunk by chunk, retrying the documents a concurrent writer changed
 * under it. Read or write blind: the first chunk is read alone; when none of its documents exists
 * (a batch of new contacts), later chunks are created without a read — a write per document, like
 * a plain import. A blind create that finds its document turns reading back on.
 */
async function upsertChunks(
  batch: BatchContext,
  docsOf: (groups: DocGroup[]) => DocState[],
  groups: DocGroup[],
  onProgress?: (done: number) => void,
): Promise<void> {
  const attempt = (docs: DocState[], n: number, blind = false) => readAndEnqueue(batch, docs, n >= MAX_ATTEMPTS, blind)
  let done = 0
  const chunkTasks: Array<Promise<void>> = []
  const reading: Array<Promise<unknown>> = []
  let blind = false
  try {
    for (let start = 0; start < groups.length; start += DOCS_PER_CHUNK) {
      const docs = docsOf(groups.slice(start, start + DOCS_PER_CHUNK))
      const records = docs.reduce((sum, d) => sum + d.group.indexes.length, 0)
      // up to READ_AHEAD chunks are read at once (chunks hold disjoint documents); each
      // chunk's writes (and retries) run on while later chunks are read
      const firstAttempt = attempt(docs, 1, blind)
      reading.push(firstAttempt)
      chunkTasks.push(
        (async () => {
          let conflicted = await (await firstAttempt).settled
          if (conflicted.length > 0) blind = false
          for (let n = 2; conflicted.length > 0; n++) {
            await retryWait(n - 1)
            conflicted = await (await attempt(conflicted, n)).settled
          }
          done += records
          onProgress?.(done)
        })(),
      )
      if (start === 0) blind = (await firstAttempt).existing === 0
      if (reading.length >= READ_AHEAD) await reading.shift()
    }
    await Promise.all(chunkTasks)
  } finally {
    // every write of this batch has settled (the writer stays open for the next batches)
    await Promise.allSettled(chunkTasks)
  }
}

export function createFirestoreContactStore(firestore: Firestore, options: { bulkWriterThrottling?: boolean } = {}): ContactStore {
  const throttling = options.bulkWriterThrottling ?? true
  /** created on the first batch, shared by every batch (each awaits its own writes), closed with the store */
  let sharedWriter: BulkWriter | null = null
  const writerOf = () => (sharedWriter ??= firestore.bulkWriter({ throttling: throttling ? { ...CONTACT_WRITER_THROTTLING } : false }))
  const contacts = (accountId: string) => firestore.collection('accounts').doc(accountId).collection('contacts')
  const first = async (accountId: string, field: string, value: string): Promise<ContactRecord | null> => {
    const snap = await contacts(accountId).where(field, '==', value).limit(1).get()
    return snap.empty ? null : (snap.docs[0]!.data() as ContactRecord)
  }

  return {
    async upsertBatch(accountId: string, inputs: ContactUpsertInput[], merge: MergeFn, opts: UpsertBatchOptions = {}) {
      const results: UpsertOutcome[] = new Array(inputs.length)
      if (inputs.length === 0) return results
      const collection = contacts(accountId)
      const groups = groupByDocument(accountId, inputs)
      const batch: BatchContext = { firestore, accountId, inputs, merge, writer: writerOf(), results }
      const docsOf = (chunk: DocGroup[]) => chunk.map((group) => ({ group, ref: collection.doc(group.contactId) }))
      await upsertChunks(batch, docsOf, groups, opts.onProgress)
      return results
    },

    async get(accountId, contactId) {
      const snap = await contacts(accountId).doc(contactId).get()
      return snap.exists ? (snap.data() as ContactRecord) : null
    },
    async getByAnchor(accountId, source, externalId) {
      const snap = await contacts(accountId)
        .doc(contactIdFor(accountId, source, externalId))
        .get()
      return snap.exists ? (snap.data() as ContactRecord) : null
    },
    findByNetworkUrl: (accountId, networkUrl) => first(accountId, 'identity.network_url', networkUrl),
    findByBusinessEmail: (accountId, email) => first(accountId, 'business_email', email.toLowerCase()),
    async list(accountId, { after, before, limit }) {
      if (limit <= 0) return []
      if (before !== undefined && after === undefined) {
        // the previous page, read downwards from its end, then put back in order. On the `id` field
        // (the document id, copied in every record): Firestore scans document ids upwards only,
        // while a single field has an automatic descending index
        const snap = await contacts(accountId).orderBy('id', 'desc').where('id', '<', before).limit(limit).get()
        return snap.docs.map((d) => d.data() as ContactRecord).reverse()
      }
      let query = contacts(accountId).orderBy(FieldPath.documentId()).limit(limit)
      if (after !== undefined) query = query.startAfter(after)
      const snap = await query.get()
      return snap.docs.map((d) => d.data() as ContactRecord)
    },

    async deleteAccountData(accountId) {
      await firestore.recursiveDelete(contacts(accountId))
    },
    // the writer's writes are done (each batch waited for its own); the Firestore client belongs to
    // whoever created it (PlatformDeps terminates it)
    async close() {
      const writer = sharedWriter
      sharedWriter = null
      await writer?.close().catch(() => {})
    },
  }
}

import type { ContactRecord, ContactUpsertInput } from '../model/records.ts'

/**
 * Pure merge of one upsert into the existing record (null when the document does not exist).
 * Must be deterministic and idempotent: merge(merge(x, i), i) equals merge(x, i).
 * Returns null when nothing changes (the adapter then skips the write).
 */
export type MergeFn = (existing: ContactRecord | null, input: ContactUpsertInput, accountId: string) => ContactRecord | null

export interface UpsertOutcome {
  contactId: string
  /** created: new document; updated: changed; unchanged: merge returned null; failed: could not be stored */
  result: 'created' | 'updated' | 'unchanged' | 'failed'
  error?: string
  /** the contact this write left stored, when it changed it (set by the contact-write seam, domain/contacts/write-seam.ts) */
  written?: ContactWritten
}

export interface UpsertBatchOptions {
  /** called as chunks complete (records done so far); lets a worker extend its ack deadline */
  onProgress?: (done: number) => void
  /**
   * a redelivery: also report, as `reapplied`, contacts the store found unchanged that already
   * hold a write of these inputs (an earlier attempt stored them and may have stopped before
   * their reactions ran, e.g. before their change rows were published)
   */
  recheckApplied?: boolean
}

/** Who wrote a contact, from the input's writer class (docs/merge.md): push (manual), visit (provider), enrichment, form. */
export type ContactWriter = 'push' | 'visit' | 'enrichment' | 'form'

/**
 * The outcome of one write to a stored contact, whoever wrote it: what every reaction to a
 * contact change (the change feed) receives, from the one seam every writer crosses.
 */
export interface ContactWritten {
  accountId: string
  /** the contact as stored after the write */
  contact: ContactRecord
  /** created or updated by this call; reapplied: see UpsertBatchOptions.recheckApplied */
  change: 'created' | 'updated' | 'reapplied'
  by: ContactWriter
  /** event time of the last input applied to the contact (batch receipt or visit time) */
  at: string
}

/**
 * A reaction to contact writes, listed at the composition root (platform/listeners.ts). It runs
 * after the store committed; a listener that rejects makes the write call reject (the writer
 * retries, and its redelivery reports the contacts as `reapplied`).
 */
export interface ContactWrittenListener {
  /** for the log line when it throws */
  readonly name: string
  onContactWritten(written: readonly ContactWritten[]): Promise<void>
}

/**
 * Contacts of all accounts, keyed by (account, contact id). The contact id is deterministic:
 * `contactIdFor(account, source, external_id)` from `model/ids.ts`.
 */
export interface ContactStore {
  /**
   * Read-merge-write each input with optimistic concurrency: a concurrent writer of the same
   * document makes the adapter re-read and re-merge, never lose a write. Inputs for the same
   * document within one batch are applied in order. One failing record does not fail the rest.
   */
  upsertBatch(accountId: string, inputs: ContactUpsertInput[], merge: MergeFn, options?: UpsertBatchOptions): Promise<UpsertOutcome[]>
  get(accountId: string, contactId: string): Promise<ContactRecord | null>
  getByAnchor(accountId: string, source: string, externalId: string): Promise<ContactRecord | null>
  /** first contact of the account whose identity.network_url (or business_email) equals the value */
  findByNetworkUrl(accountId: string, networkUrl: string): Promise<ContactRecord | null>
  findByBusinessEmail(accountId: string, email: string): Promise<ContactRecord | null>
  /**
   * keyset page ordered by contact id ascending, starting strictly after `after`; or, with
   * `before` instead, the `limit` contacts just below `before`, still ascending (the previous
   * page: the portal's tables page both ways, issue 22)
   */
  list(accountId: string, options: { after?: string; before?: string; limit: number }): Promise<ContactRecord[]>

  /** removes every contact of the account (tests, account deletion) */
  deleteAccountData(accountId: string): Promise<void>
  close(): Promise<void>
}

import type { ContactWrittenListener } from './contact-store.ts'

/**
 * Outcomes the hot paths return, and the typed lists of what reacts to them, built once at the
 * composition root (platform/listeners.ts). A hot path returns its outcome and names no
 * observer; each listener is one file stating its failure contract.
 */

/** A record or a value of a pushed batch the worker did not store, and why. */
export interface Refusal {
  /** the record's position in the push */
  index: number
  /** the record's external_id, when it has one */
  external_id: string | null
  /** the refused value's target (`email`), null when the whole record was refused */
  field: string | null
  /** the refused value as sent (shortened), null for a whole record */
  value: string | null
  reason: string
}

/** What one `contact-batches` message came to (services/upsert-worker/src/handle-batch.ts). */
export type BatchApplied =
  | {
      kind: 'applied'
      accountId: string
      connectionId: string
      batchId: string
      /** the push's request id, when the batch message carries it (the inbound debugger's entry) */
      requestId: string | null
      receivedAt: string
      /** records in the batch */
      records: number
      /** records stored that changed their contact */
      applied: number
      /** records stored that changed nothing (a redelivery, or the same values again) */
      unchanged: number
      /** records not stored and values not stored, with their reasons */
      refused: Refusal[]
      /** records parked on the dead-letter topic, by reason */
      deadLettered: { too_large: number; store_failed: number }
      /** contacts changed (their change rows went out through the contact-write seam) */
      changed: number
    }
  /** a message that can never be read, parked as it came */
  | { kind: 'unreadable'; accountId: string | undefined; reason: string }

export type BatchAppliedListener = (outcome: BatchApplied) => Promise<void>

export interface Listeners {
  contactWritten: readonly ContactWrittenListener[]
  batchApplied: readonly BatchAppliedListener[]
}

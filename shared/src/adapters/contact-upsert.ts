import type { ContactRecord, ContactUpsertInput } from '../model/records.ts'
import { contactIdFor } from '../model/ids.ts'
import type { MergeFn, UpsertOutcome } from '../ports/contact-store.ts'

/** The inputs of one batch that target one document, in batch order. */
export interface DocGroup {
  contactId: string
  /** positions in the batch, in order */
  indexes: number[]
}

/**
 * Groups a batch by target document, keeping each document's inputs in batch order and the
 * documents in order of first appearance (so chunks follow the batch).
 */
export function groupByDocument(accountId: string, inputs: readonly ContactUpsertInput[]): DocGroup[] {
  const groups = new Map<string, DocGroup>()
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i]!
    const contactId = contactIdFor(accountId, input.source, input.external_id)
    let group = groups.get(contactId)
    if (!group) {
      group = { contactId, indexes: [] }
      groups.set(contactId, group)
    }
    group.indexes.push(i)
  }
  return [...groups.values()]
}

export interface AppliedGroup {
  /** the record to write, or null when no input changed anything (skip the write) */
  next: ContactRecord | null
  /** one outcome per input of the group, same order as `group.indexes` */
  outcomes: UpsertOutcome[]
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err))

/**
 * Applies the group's inputs one after the other onto `existing`. A merge that throws fails only
 * its own input; the following inputs see the state before it.
 */
export function applyGroup(
  accountId: string,
  group: DocGroup,
  existing: ContactRecord | null,
  inputs: readonly ContactUpsertInput[],
  merge: MergeFn,
): AppliedGroup {
  let current = existing
  let changed = false
  const outcomes: UpsertOutcome[] = []
  for (const index of group.indexes) {
    let next: ContactRecord | null
    try {
      next = merge(current, inputs[index]!, accountId)
    } catch (err) {
      outcomes.push({ contactId: group.contactId, result: 'failed', error: errorText(err) })
      continue
    }
    if (next === null) {
      outcomes.push({ contactId: group.contactId, result: 'unchanged' })
      continue
    }
    outcomes.push({ contactId: group.contactId, result: current === null ? 'created' : 'updated' })
    current = next
    changed = true
  }
  return { next: changed ? current : null, outcomes }
}

/** Marks every input of the group that would have been written as failed (the write itself failed). */
export function failWrites(outcomes: UpsertOutcome[], error: string): UpsertOutcome[] {
  return outcomes.map((o) => (o.result === 'created' || o.result === 'updated' ? { contactId: o.contactId, result: 'failed', error } : o))
}

export const DOCS_PER_CHUNK = 500

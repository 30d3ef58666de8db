import type { PlatformDeps } from '../../ports/deps.ts'
import type { ContactRecord } from '../../model/records.ts'
import { readRecentPushes } from '../activity/push-log.ts'
import { BUSINESS_EMAIL_KEY } from './key-set.ts'

/**
 * The contact page's "missing, and why" beyond the contract's reason codes (docs/portal.md): the
 * facts the tenant can act on, where we know them.
 * - A value the worker refused: the push that sent it (the inbound debugger's record of the
 *   worker's refusals, kept with the push for its retention) and why it was refused.
 * - A custom field whose mapping was saved after this contact's last push: the push carried the
 *   key, but no mapping read it then, so "the sources sent no value" would be false.
 *
 * A note is words and instants: an instant stays an ISO string in `{ at }` so that whoever shows
 * the note writes it in its own time format (the portal: `when`, docs/portal.md "Times and ids"),
 * never as raw ISO inside a sentence.
 */

/** One part of a note: words, or an instant (ISO 8601) to show in the reader's time format. */
type MissingNotePart = string | { readonly at: string }

/** A note on one missing key, in parts. */
export type MissingNote = readonly MissingNotePart[]

/** The target of a refused value, as the key it leaves missing. */
const KEY_OF_FIELD: Record<string, string> = { email: BUSINESS_EMAIL_KEY }

/** rank of an inbound push's writes (merge.ts RANK: manual) */
const PUSH_RANK = '3'

/** When a push last wrote this contact: the latest event time of a field version written at the push's rank. */
function lastPushAt(record: ContactRecord): string | null {
  let last: string | null = null
  for (const v of Object.values(record.versions ?? {})) {
    // a version is `rank|at|origin`, or `at|rank|origin` for insert-only fields (merge.ts)
    const [a, b] = v.split('|')
    const [rank, at] = /^\d+$/.test(a ?? '') ? [a, b] : [b, a]
    if (rank === PUSH_RANK && at !== undefined && (last === null || at > last)) last = at
  }
  return last
}

export async function missingNotes(
  deps: Pick<PlatformDeps, 'contacts' | 'tenants' | 'pushLog' | 'clock'>,
  accountId: string,
  contactId: string,
  missing: Readonly<Record<string, string>>,
): Promise<Record<string, MissingNote>> {
  const record = await deps.contacts.get(accountId, contactId)
  if (!record) return {}
  const connections = (await deps.tenants.listConnections(accountId)).filter((c) => c.source === record.source)
  const notes: Record<string, MissingNote> = {}

  // newest push first: the latest refusal of a value is the one to name
  const entries = (await Promise.all(connections.map((c) => readRecentPushes(deps, c.id)))).flat().sort((x, y) => (x.id < y.id ? 1 : -1))
  for (const e of entries) {
    for (const r of e.outcome?.refused ?? []) {
      const key = r.field === null ? undefined : KEY_OF_FIELD[r.field]
      if (r.external_id !== record.external_id || key === undefined || !(key in missing) || notes[key] !== undefined) continue
      notes[key] = ['The push of ', { at: e.at }, ` sent ${r.field} "${r.value ?? ''}", which was refused: ${r.reason}. Push a valid value to fill it.`]
    }
  }

  const pushedAt = lastPushAt(record)
  if (pushedAt !== null) {
    for (const c of connections) {
      // the mappings were saved after the contact's last push: the key it may have carried was not read then
      if (c.updated_at <= pushedAt) continue
      for (const m of c.field_mappings) {
        const key = m.to
        if (!key.startsWith('custom_fields.') || missing[key] !== 'no_source' || notes[key] !== undefined) continue
        notes[key] = [
          'Sent before the mapping for this field existed: this contact was last pushed ',
          { at: pushedAt },
          `, and the mappings of ${c.name ?? c.id} (${m.from} → ${key}) were saved `,
          { at: c.updated_at },
          '. Push the contact again to fill it.',
        ]
      }
    }
  }
  return notes
}

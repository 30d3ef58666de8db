import { contactIdFor } from '../../model/ids.ts'
import type { ContactPatch, ContactRecord, ContactUpsertInput, NameSource, WriterClass } from '../../model/records.ts'

/**
 * The one merge every writer goes through (inbound pushes, the visit pipeline). Pure and
 * deterministic, so the contact store can re-run it under optimistic concurrency.
 *
 * Convergence: every field remembers the version of the write that set it, and a write lands
 * only when its version is greater. Versions form a total order, so applying the same set of
 * writes in any order, any number of times, ends in the same record (redelivery, reordering).
 *
 * - Every field: version = (writer rank, event time, origin). A lower writer never overwrites a
 *   value set by a higher one (ladder form > manual > enrichment > provider, contract 2.1; null
 *   ranks as provider); between writers of one class the latest event wins. So the row a race
 *   leaves is always one writer's complete write, never a mix (reliability item 10).
 * - `name_source` is the class of the writer whose version holds the name columns.
 * - `resolved_by` is insert-only: the earliest write that carries one keeps it.
 * - `first_seen_at` / `last_seen_at`: earliest / latest event time seen.
 * - null / undefined in a patch means "no value": it never erases a stored value.
 */

const RANK: Record<WriterClass, number> = { provider: 1, enrichment: 2, manual: 3, form: 4 }
const NAME_SOURCE_OF_RANK: Record<number, NameSource> = { 1: 'provider', 2: 'enrichment', 3: 'manual', 4: 'form' }
const NAME_FIELDS = new Set(['first_name', 'last_name', 'full_name'])

/** ISO instants of one fixed width, so versions compare as strings. */
function normalizeInstant(at: string): string {
  const ms = Date.parse(at)
  return Number.isNaN(ms) ? at : new Date(ms).toISOString()
}

function emptyRecord(accountId: string, input: ContactUpsertInput, at: string): ContactRecord {
  return {
    id: contactIdFor(accountId, input.source, input.external_id),
    account_id: accountId,
    source: input.source,
    external_id: input.external_id,
    subject_type: 'contact',
    identity: {},
    company: {},
    location: {},
    business_email: null,
    emails: [],
    phones: [],
    traits: [],
    custom_fields: {},
    name_source: null,
    resolved_by: null,
    first_seen_at: at,
    last_seen_at: at,
    updated_at: at,
    versions: {},
  }
}

interface Writer {
  at: string
  rank: number
  origin: string
}

function fieldVersion(w: Writer): string {
  return `${w.rank}|${w.at}|${w.origin}`
}

/** the order of insert-only fields: the earliest write keeps them */
function insertVersion(w: Writer): string {
  return `${w.at}|${w.rank}|${w.origin}`
}

/** Writes `value` under `path` when the write's version beats the stored one. */
function writeField(record: ContactRecord, path: string, version: string, apply: () => void): void {
  const stored = record.versions[path]
  if (stored !== undefined && stored >= version) return
  record.versions[path] = version
  apply()
}

function mergeGroup<K extends 'identity' | 'company' | 'location'>(record: ContactRecord, group: K, values: ContactPatch[K], w: Writer): void {
  if (!values) return
  for (const [field, value] of Object.entries(values)) {
    if (value === null || value === undefined) continue
    writeField(record, `${group}.${field}`, fieldVersion(w), () => {
      ;(record[group] as Record<string, unknown>)[field] = value
    })
  }
}

/**
 * `identity.full_name` is derived, not merged: "joined from first and last name at ingest"
 * (contract 2.1), from the names the record holds once this write is merged. Joining only the
 * names one write carried left `{first_name: "Grace", last_name: "Murray", full_name: "Murray"}`
 * after a write of the last name alone (an outside probe, 2026-11-30). Its version is the newer
 * of the two names', so `name_source` reads as before. A record with neither name keeps what it
 * has (no writer sends a full name without one).
 */
function deriveFullName(record: ContactRecord): void {
  const { first_name: first, last_name: last } = record.identity
  const parts = [first, last].flatMap((x) => (typeof x === 'string' && x.trim() !== '' ? [x.trim()] : []))
  if (parts.length === 0) return
  record.identity.full_name = parts.join(' ')
  // versions compare as strings (fieldVersion): the newer is the later in sorted order
  const versions = [record.versions['identity.first_name'], record.versions['identity.last_name']].filter((x): x is string => x !== undefined)
  const newest = versions.sort().at(-1)
  if (newest !== undefined) record.versions['identity.full_name'] = newest
}

/** The highest writer rank that set any name, as the contract's `name_source`. */
function nameSourceOf(record: ContactRecord): NameSource {
  let best = 0
  for (const field of NAME_FIELDS) {
    const v = record.versions[`identity.${field}`]
    if (v !== undefined) best = Math.max(best, Number(v.split('|', 1)[0]))
  }
  return best === 0 ? null : NAME_SOURCE_OF_RANK[best]!
}

/** The same keys in one order, so converged rows are equal byte for byte, not only deeply. */
function sortedKeys<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T
}

export function mergeContact(existing: ContactRecord | null, input: ContactUpsertInput, accountId: string): ContactRecord | null {
  const at = normalizeInstant(input.at)
  const record: ContactRecord = existing ? structuredClone(existing) : emptyRecord(accountId, input, at)
  const w: Writer = { at, rank: RANK[input.writer], origin: input.origin }
  const v = fieldVersion(w)
  const p = input.patch

  if (p.subject_type)
    writeField(record, 'subject_type', v, () => {
      record.subject_type = p.subject_type!
    })
  mergeGroup(record, 'identity', p.identity, w)
  mergeGroup(record, 'company', p.company, w)
  mergeGroup(record, 'location', p.location, w)
  if (p.business_email) {
    const email = p.business_email.trim().toLowerCase()
    writeField(record, 'business_email', v, () => {
      record.business_email = email
    })
  }
  if (p.emails)
    writeField(record, 'emails', v, () => {
      record.emails = structuredClone(p.emails!)
    })
  if (p.phones)
    writeField(record, 'phones', v, () => {
      record.phones = structuredClone(p.phones!)
    })
  if (p.traits)
    writeField(record, 'traits', v, () => {
      record.traits = structuredClone(p.traits!)
    })
  for (const [key, field] of Object.entries(p.custom_fields ?? {})) {
    if (field.value === null || field.value === undefined) continue
    writeField(record, `custom_fields.${key}`, v, () => {
      record.custom_fields[key] = structuredClone(field)
    })
  }
  if (input.resolved_by) {
    // insert-only: the earliest write carrying a resolver keeps it, whatever the arrival order
    const iv = insertVersion(w)
    const stored = record.versions.resolved_by
    if (stored === undefined || iv < stored) {
      record.versions.resolved_by = iv
      record.resolved_by = input.resolved_by
    }
  }
  deriveFullName(record)
  record.name_source = nameSourceOf(record)
  if (at < record.first_seen_at) record.first_seen_at = at
  if (at > record.last_seen_at) record.last_seen_at = at

  record.identity = sortedKeys(record.identity)
  record.company = sortedKeys(record.company)
  record.location = sortedKeys(record.location)
  record.custom_fields = sortedKeys(record.custom_fields)
  record.versions = sortedKeys(record.versions)

  if (existing && JSON.stringify(record) === JSON.stringify(existing)) return null
  if (at > record.updated_at) record.updated_at = at
  return record
}

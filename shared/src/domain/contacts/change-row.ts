import type { ContactRecord } from '../../model/records.ts'
import { sortKeysDeep } from '../../contract/canonical-json.ts'
import { activeTraceId } from '../../logging/trace-propagation.ts'
import { CHANGE_ROW_VERSION, type ChangeLoadRow, type ChangeOp, type ChangeRow, type ChangeRowAttributes } from '../../contract/messages.ts'

/**
 * One contact change as a flat BigQuery row. The upsert worker publishes it to `contact-changes`
 * (ChangeRow; a BigQuery subscription writes it to `contact_changes`) and the export command
 * writes it as newline-delimited JSON for `bq load` (ChangeLoadRow), so both feed one table
 * whose schema is CHANGE_ROW_BIGQUERY_SCHEMA (committed as
 * infra/bigquery/contact_changes.schema.json).
 *
 * The two differ only in the TIMESTAMP columns, each in the form its writer documents: the
 * subscription writes through the Storage Write API, whose TIMESTAMP input is an integer of
 * microseconds since the epoch; a load job reads date-time strings (docs/deploy.md, "BigQuery:
 * how rows get in", has the sources). Absent values are null, repeated records are always arrays
 * (BigQuery rejects a null array).
 */

/** The attributes of the `contact-changes` message that carries a row (its format version and ids). */
export function changeRowAttributes(row: ChangeRow): ChangeRowAttributes {
  return { v: CHANGE_ROW_VERSION, account_id: row.account_id, contact_id: row.contact_id }
}

/**
 * An ISO-8601 instant as whole microseconds since the Unix epoch. Date.parse keeps milliseconds;
 * the string's 4th to 6th fraction digits, when it has them, are the microseconds.
 */
export function epochMicros(iso: string): number {
  const ms = Date.parse(iso)
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`not an instant after 1970: ${iso}`)
  const fraction = /\.(\d+)(?:Z|[+-]\d\d:?\d\d)$/i.exec(iso)?.[1] ?? ''
  return ms * 1000 + Number(fraction.padEnd(6, '0').slice(3, 6))
}

/**
 * The row the upsert worker publishes to `contact-changes` (TIMESTAMP columns in microseconds),
 * with the trace it is made in: the batch's, which began at the edge's request (docs/operations.md, "Traces").
 */
export function toChangeRow(record: ContactRecord, at: string, op: ChangeOp = 'upsert', traceId: string | null = activeTraceId()): ChangeRow {
  return { ...rowOf(record, at, op, epochMicros), trace_id: traceId }
}

/** The row the export command writes for `bq load` (TIMESTAMP columns as the stored ISO strings). */
export function toLoadRow(record: ContactRecord, at: string, op: ChangeOp = 'upsert'): ChangeLoadRow {
  return { ...rowOf(record, at, op, (iso) => iso), trace_id: null }
}

type Instants<T> = { changed_at: T; first_seen_at: T | null; last_seen_at: T | null; updated_at: T | null }

function rowOf<T>(record: ContactRecord, at: string, op: ChangeOp, instant: (iso: string) => T): Omit<ChangeRow, keyof Instants<T> | 'trace_id'> & Instants<T> {
  const maybe = (iso: string | null | undefined) => (iso === null || iso === undefined ? null : instant(iso))
  return {
    account_id: record.account_id,
    contact_id: record.id,
    source: record.source,
    external_id: record.external_id,
    op,
    changed_at: instant(at),
    first_name: record.identity.first_name ?? null,
    last_name: record.identity.last_name ?? null,
    full_name: record.identity.full_name ?? null,
    title: record.identity.title ?? null,
    business_email: record.business_email ?? null,
    company_name: record.company.name ?? null,
    company_domain: record.company.domain ?? null,
    city: record.location.city ?? null,
    state: record.location.state ?? null,
    postal_code: record.location.postal_code ?? null,
    name_source: record.name_source ?? null,
    resolved_by: record.resolved_by ?? null,
    first_seen_at: maybe(record.first_seen_at),
    last_seen_at: maybe(record.last_seen_at),
    updated_at: maybe(record.updated_at),
    emails: (record.emails ?? []).map((e) => ({ value: e.value ?? null, kind: e.kind ?? null, verified: e.verified ?? null })),
    phones: (record.phones ?? []).map((p) => ({ value: p.value ?? null, kind: p.kind ?? null, dnc: p.dnc ?? null, dnc_known: p.dnc_known === true })),
    traits: (record.traits ?? []).map((t) => ({ key: t.key ?? null, label: t.label ?? null, value: t.value ?? null, group: t.group })),
    custom_fields: JSON.stringify(sortKeysDeep(record.custom_fields ?? {})),
  }
}

// ---- BigQuery table schema ---------------------------------------------------------------

type BigQueryType = 'STRING' | 'TIMESTAMP' | 'BOOLEAN' | 'RECORD'
type BigQueryMode = 'REQUIRED' | 'NULLABLE' | 'REPEATED'

export interface BigQueryField {
  name: string
  type: BigQueryType
  mode: BigQueryMode
  description: string
  fields?: BigQueryField[]
}

const col = (name: string, type: BigQueryType, mode: BigQueryMode, description: string): BigQueryField => ({ name, type, mode, description })
const str = (name: string, description: string): BigQueryField => col(name, 'STRING', 'NULLABLE', description)
const ts = (name: string, description: string): BigQueryField => col(name, 'TIMESTAMP', 'NULLABLE', description)

/**
 * The `contact_changes` table schema (the JSON array `bq` and Terraform take). Column order is
 * the ChangeRow key order. custom_fields is STRING holding JSON text, not the JSON type: both the
 * Pub/Sub BigQuery subscription and `bq load` accept a string there, and JSON_VALUE /
 * PARSE_JSON read it.
 */
export const CHANGE_ROW_BIGQUERY_SCHEMA: readonly BigQueryField[] = [
  col('account_id', 'STRING', 'REQUIRED', 'Account (tenant) id, uuid'),
  col('contact_id', 'STRING', 'REQUIRED', 'Contact id, uuid derived from (account, source, external_id)'),
  col('source', 'STRING', 'REQUIRED', 'Source slug of the (source, external_id) anchor'),
  col('external_id', 'STRING', 'REQUIRED', 'External id of the contact within its source'),
  col('op', 'STRING', 'REQUIRED', 'upsert or delete'),
  col('changed_at', 'TIMESTAMP', 'REQUIRED', 'When the change happened (export: the contact updated_at); partitioning column'),
  str('first_name', 'Identity first name'),
  str('last_name', 'Identity last name'),
  str('full_name', 'Identity full name'),
  str('title', 'Job title'),
  str('business_email', 'Business email, lower-cased'),
  str('company_name', 'Company name'),
  str('company_domain', 'Company domain'),
  str('city', 'Location city'),
  str('state', 'Location state'),
  str('postal_code', 'Location postal code'),
  str('name_source', 'Writer class of the current name: form, manual, enrichment or provider'),
  str('resolved_by', 'What first resolved the contact (insert-only)'),
  ts('first_seen_at', 'First time the contact was seen'),
  ts('last_seen_at', 'Last time the contact was seen'),
  ts('updated_at', 'Last time the stored contact changed'),
  {
    name: 'emails',
    type: 'RECORD',
    mode: 'REPEATED',
    description: 'Email handles',
    fields: [str('value', 'Email address'), str('kind', 'Kind of address'), col('verified', 'BOOLEAN', 'NULLABLE', 'Whether the address is verified')],
  },
  {
    name: 'phones',
    type: 'RECORD',
    mode: 'REPEATED',
    description: 'Phone handles',
    fields: [
      str('value', 'Phone number'),
      str('kind', 'Kind of number'),
      col('dnc', 'BOOLEAN', 'NULLABLE', 'On a do-not-call list'),
      col('dnc_known', 'BOOLEAN', 'NULLABLE', 'Whether the do-not-call status is known'),
    ],
  },
  {
    name: 'traits',
    type: 'RECORD',
    mode: 'REPEATED',
    description: 'Traits',
    fields: [str('key', 'Trait key'), str('label', 'Trait label'), str('value', 'Trait value'), str('group', 'demographics, financial or household')],
  },
  str('custom_fields', 'JSON object text: {key: {value, source, enriched_at}}'),
  str('trace_id', 'Cloud Trace id of the trace the change was made in (the push that carried it); null for exported rows'),
]

import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { CONTACT_CHANGES_SCHEMA_FILE } from '@lsv/shared/contract/generated-files.ts'
import { ChangeRow } from '@lsv/shared/contract/messages.ts'
import { messageCheck } from '@lsv/shared/contract/message-check.ts'
import { toChangeRow } from '@lsv/shared/domain/contacts/change-row.ts'
import type { ContactRecord } from '@lsv/shared/model/records.ts'

/**
 * The ChangeRow schema (contract/messages.ts) against the table it feeds: the committed
 * infra/bigquery/contact_changes.schema.json (what Terraform and `bq load` create). Same columns
 * in the same order, each of the BigQuery type its JSON value loads into, and no value the
 * schema allows that the column refuses: a nullable member needs a NULLABLE column, an array a
 * REPEATED one, a REQUIRED column a member that is never null.
 */

interface BigQueryField { name: string; type: string; mode: string; fields?: BigQueryField[] }
interface JsonSchema { type?: string; format?: string; anyOf?: JsonSchema[]; items?: JsonSchema; properties?: Record<string, JsonSchema>; required?: string[] }

/** The one non-null member of `T | null`, and whether null is allowed. */
function unwrap(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  if (!schema.anyOf) return { schema, nullable: false }
  const others = schema.anyOf.filter((s) => s.type !== 'null')
  expect(others, JSON.stringify(schema)).toHaveLength(1)
  return { schema: others[0]!, nullable: others.length < schema.anyOf.length }
}

/** The BigQuery column a member's JSON value loads into, as [name, type, mode, nested]. */
function columnsOf(object: JsonSchema): unknown[] {
  return Object.entries(object.properties!).map(([name, member]) => {
    expect(object.required, `${name} is always present`).toContain(name)
    const { schema, nullable } = unwrap(member)
    if (schema.type === 'array') {
      expect(nullable, `${name}: BigQuery rejects a null array`).toBe(false)
      return [name, 'RECORD', 'REPEATED', columnsOf(schema.items!)]
    }
    const type = schema.type === 'string' ? (schema.format === 'date-time' ? 'TIMESTAMP' : 'STRING') : schema.type === 'boolean' ? 'BOOLEAN' : `unmapped ${schema.type}`
    return [name, type, nullable ? 'NULLABLE' : 'NOT NULL', null]
  })
}

/** The committed table schema in the same form; a REQUIRED column and a NULLABLE one both take a value that is never null. */
function tableColumns(fields: readonly BigQueryField[]): unknown[] {
  return fields.map((f) => [f.name, f.type, f.mode, f.fields ? tableColumns(f.fields) : null])
}

/** A never-null member fits a REQUIRED or a NULLABLE column; a nullable one only a NULLABLE column. */
function fits(row: unknown[], table: unknown[]): boolean {
  const [name, type, mode, nested] = row as [string, string, string, unknown[] | null]
  const [tName, tType, tMode, tNested] = table as [string, string, string, unknown[] | null]
  if (name !== tName || type !== tType) return false
  if (mode === 'REPEATED' ? tMode !== 'REPEATED' : mode === 'NULLABLE' ? tMode !== 'NULLABLE' : tMode === 'REPEATED') return false
  if (nested === null || tNested === null) return nested === tNested
  return nested.length === tNested.length && nested.every((n, i) => fits(n as unknown[], tNested[i] as unknown[]))
}

const record = (over: Partial<ContactRecord> = {}): ContactRecord => ({
  id: '5b0c7c1e-58c4-4f3a-9d36-0c3c3c1f6f10', account_id: '0d1b8c6e-1e43-4a4e-8a0c-2b8e1f7c9a21', source: 'crm', external_id: 'e-1',
  subject_type: 'contact', identity: {}, company: {}, location: {}, business_email: null, emails: [], phones: [], traits: [],
  custom_fields: {}, name_source: null, resolved_by: null,
  first_seen_at: '2026-01-01T00:00:00.000Z', last_seen_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', versions: {},
  ...over,
})

describe('the ChangeRow schema and the contact_changes table', () => {
  const table = JSON.parse(readFileSync(CONTACT_CHANGES_SCHEMA_FILE, 'utf8')) as BigQueryField[]
  const schema = JSON.parse(JSON.stringify(ChangeRow)) as JsonSchema

  it('has the columns of infra/bigquery/contact_changes.schema.json, in order, each of its type and mode', () => {
    const rows = columnsOf(schema)
    const columns = tableColumns(table)
    expect(rows.map((r) => (r as unknown[])[0])).toEqual(columns.map((c) => (c as unknown[])[0]))
    rows.forEach((row, i) => expect(fits(row as unknown[], columns[i] as unknown[]), `${JSON.stringify(row)} vs ${JSON.stringify(columns[i])}`).toBe(true))
  })

  it('refuses a member the table does not have', () => {
    const check = messageCheck(ChangeRow)
    const row = toChangeRow(record(), '2026-01-02T00:00:00.000Z')
    expect(check(row).ok).toBe(true)
    expect(check({ ...row, extra: 1 }).ok).toBe(false)
    expect(check({ ...row, changed_at: 'yesterday' }).ok).toBe(false)
    expect(check({ ...row, emails: null }).ok).toBe(false)
  })

  it('holds what toChangeRow makes of a bare and of a full record', () => {
    const check = messageCheck(ChangeRow)
    const full = record({
      identity: { first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace', title: 'Analyst' },
      company: { name: 'Engines', domain: 'engines.example' },
      location: { city: 'London', state: null, postal_code: 'N1' },
      business_email: 'ada@engines.example',
      emails: [{ value: 'ada@example.com', kind: 'personal', verified: true }, { value: null, kind: null, verified: null }],
      phones: [{ value: '+15555550101', kind: 'mobile', dnc: false, dnc_known: true }, { value: '+15555550102', kind: null, dnc: null, dnc_known: false }],
      traits: [{ key: 'income', label: 'Income', value: 'high', group: 'financial' }, { key: null, label: null, value: null, group: 'household' }],
      custom_fields: { b: { value: ['x'], source: 'manual', enriched_at: null }, a: { value: '1', source: 'ai_enrichment', enriched_at: '2026-01-01T00:00:00.000Z' } },
      name_source: 'form', resolved_by: 'provider-x',
    })
    for (const r of [record(), full]) {
      for (const op of ['upsert', 'delete'] as const) {
        const result = check(toChangeRow(r, '2026-01-02T00:00:00.000Z', op))
        expect(result, JSON.stringify(result)).toMatchObject({ ok: true })
      }
    }
  })
})

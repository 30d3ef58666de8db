import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { CONTACT_CHANGES_SCHEMA_FILE } from '@lsv/shared/contract/generated-files.ts'
import { ChangeLoadRow, ChangeRow } from '@lsv/shared/contract/messages.ts'
import { messageCheck } from '@lsv/shared/contract/message-check.ts'
import { epochMicros, toChangeRow, toLoadRow } from '@lsv/shared/domain/contacts/change-row.ts'
import type { ContactRecord } from '@lsv/shared/model/records.ts'
import { baseRecord } from '../outbound/records.ts'

/**
 * The ChangeRow and ChangeLoadRow schemas (contract/messages.ts) against the table they feed: the
 * committed infra/bigquery/contact_changes.schema.json (what Terraform and `bq load` create). Same
 * columns in the same order, each of the BigQuery type its JSON value goes into, and no value the
 * schema allows that the column refuses: a nullable member needs a NULLABLE column, an array a
 * REPEATED one, a REQUIRED column a member that is never null.
 *
 * And each TIMESTAMP column's emitted value held to the rule of the writer that takes it:
 * - the BigQuery subscription (use_table_schema) writes through the BigQuery Storage Write API
 *   (https://cloud.google.com/pubsub/docs/bigquery, "BigQuery subscription workflow"), whose
 *   TIMESTAMP input is int64 microseconds since the Unix epoch, no string form listed
 *   (https://cloud.google.com/bigquery/docs/supported-data-types): the published row carries a
 *   JSON integer, exact (at most 2^53 - 1), equal to the instant in microseconds;
 * - a `bq load` of JSON takes a TIMESTAMP as YYYY-MM-DD (or YYYY/MM/DD) date and hh:mm:ss time
 *   (https://cloud.google.com/bigquery/docs/loading-data-cloud-storage-json, limitations): the
 *   export row carries that string.
 */

interface BigQueryField {
  name: string
  type: string
  mode: string
  fields?: BigQueryField[]
}
interface JsonSchema {
  type?: string
  format?: string
  title?: string
  anyOf?: JsonSchema[]
  items?: JsonSchema
  properties?: Record<string, JsonSchema>
  required?: string[]
}

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
    const type =
      schema.type === 'string'
        ? schema.format === 'date-time'
          ? 'TIMESTAMP'
          : 'STRING'
        : schema.type === 'integer' && schema.title === 'EpochMicros'
          ? 'TIMESTAMP'
          : schema.type === 'boolean'
            ? 'BOOLEAN'
            : `unmapped ${schema.type}`
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

/** the tests' stored contact (test/outbound/records.ts) with uuid ids and one instant */
const record = (over: Partial<ContactRecord> = {}): ContactRecord =>
  baseRecord({
    id: '5b0c7c1e-58c4-4f3a-9d36-0c3c3c1f6f10',
    account_id: '0d1b8c6e-1e43-4a4e-8a0c-2b8e1f7c9a21',
    external_id: 'e-1',
    first_seen_at: '2026-01-01T00:00:00.000Z',
    last_seen_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  })

describe('the ChangeRow schema and the contact_changes table', () => {
  const table = JSON.parse(readFileSync(CONTACT_CHANGES_SCHEMA_FILE, 'utf8')) as BigQueryField[]

  for (const [name, rowSchema] of [
    ['ChangeRow (published)', ChangeRow],
    ['ChangeLoadRow (exported)', ChangeLoadRow],
  ] as const) {
    it(`${name} has the columns of infra/bigquery/contact_changes.schema.json, in order, each of its type and mode`, () => {
      const rows = columnsOf(JSON.parse(JSON.stringify(rowSchema)) as JsonSchema)
      const columns = tableColumns(table)
      expect(rows.map((r) => (r as unknown[])[0])).toEqual(columns.map((c) => (c as unknown[])[0]))
      for (const [i, row] of rows.entries())
        expect(fits(row as unknown[], columns[i] as unknown[]), `${JSON.stringify(row)} vs ${JSON.stringify(columns[i])}`).toBe(true)
    })
  }

  it("refuses a member the table does not have, and a timestamp in the other writer's form", () => {
    const check = messageCheck(ChangeRow)
    const row = toChangeRow(record(), '2026-01-02T00:00:00.000Z')
    expect(check(row).ok).toBe(true)
    expect(check({ ...row, extra: 1 }).ok).toBe(false)
    expect(check({ ...row, changed_at: 'yesterday' }).ok).toBe(false)
    expect(check({ ...row, changed_at: '2026-01-02T00:00:00.000Z' }).ok).toBe(false)
    expect(check({ ...row, changed_at: 1.5 }).ok).toBe(false)
    expect(check({ ...row, emails: null }).ok).toBe(false)
    const checkLoad = messageCheck(ChangeLoadRow)
    const loadRow = toLoadRow(record(), '2026-01-02T00:00:00.000Z')
    expect(checkLoad(loadRow).ok).toBe(true)
    expect(checkLoad({ ...loadRow, changed_at: row.changed_at }).ok).toBe(false)
  })

  it('holds what toChangeRow makes of a bare and of a full record', () => {
    const check = messageCheck(ChangeRow)
    const full = record({
      identity: { first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace', title: 'Analyst' },
      company: { name: 'Engines', domain: 'engines.example' },
      location: { city: 'London', state: null, postal_code: 'N1' },
      business_email: 'ada@engines.example',
      emails: [
        { value: 'ada@example.com', kind: 'personal', verified: true },
        { value: null, kind: null, verified: null },
      ],
      phones: [
        { value: '+15555550101', kind: 'mobile', dnc: false, dnc_known: true },
        { value: '+15555550102', kind: null, dnc: null, dnc_known: false },
      ],
      traits: [
        { key: 'income', label: 'Income', value: 'high', group: 'financial' },
        { key: null, label: null, value: null, group: 'household' },
      ],
      custom_fields: {
        b: { value: ['x'], source: 'manual', enriched_at: null },
        a: { value: '1', source: 'ai_enrichment', enriched_at: '2026-01-01T00:00:00.000Z' },
      },
      name_source: 'form',
      resolved_by: 'provider-x',
    })
    const checkLoad = messageCheck(ChangeLoadRow)
    for (const r of [record(), full]) {
      for (const op of ['upsert', 'delete'] as const) {
        const result = check(toChangeRow(r, '2026-01-02T00:00:00.000Z', op))
        expect(result, JSON.stringify(result)).toMatchObject({ ok: true })
        const loaded = checkLoad(toLoadRow(r, '2026-01-02T00:00:00.000Z', op))
        expect(loaded, JSON.stringify(loaded)).toMatchObject({ ok: true })
      }
    }
  })
})

describe("each TIMESTAMP column's value, in the form its writer documents", () => {
  const table = JSON.parse(readFileSync(CONTACT_CHANGES_SCHEMA_FILE, 'utf8')) as BigQueryField[]
  const timestampColumns = table.filter((f) => f.type === 'TIMESTAMP').map((f) => f.name)
  const at = '2026-01-02T03:04:05.678Z'
  // every timestamp of the record set, one with microseconds, so each column shows its own value
  const seen = record({ first_seen_at: '2025-12-31T23:59:59.000Z', last_seen_at: '2026-01-01T12:00:00.123456Z', updated_at: '2026-01-02T03:04:05.000Z' })
  const source: Record<string, string> = { changed_at: at, first_seen_at: seen.first_seen_at, last_seen_at: seen.last_seen_at, updated_at: seen.updated_at! }

  it('finds the TIMESTAMP columns (control)', () => {
    expect(timestampColumns.sort()).toEqual(Object.keys(source).sort())
  })

  it('published for the BigQuery subscription: a JSON integer of microseconds since the epoch, exact, the instant of the record', () => {
    const wire = JSON.stringify(toChangeRow(seen, at))
    const row = JSON.parse(wire) as Record<string, unknown>
    for (const column of timestampColumns) {
      const value = row[column]
      expect(Number.isSafeInteger(value), `${column}: ${JSON.stringify(value)} is not an exact JSON integer`).toBe(true)
      // written as digits on the wire (no exponent, no fraction, no quotes)
      expect(wire, column).toMatch(new RegExp(`"${column}":\\d+[,}]`))
      const micros = value as number
      expect(micros, column).toBeGreaterThanOrEqual(0)
      expect(new Date(Math.floor(micros / 1000)).toISOString(), `${column} in milliseconds`).toBe(new Date(source[column]!).toISOString())
      expect(micros % 1000, `${column}: the microseconds of ${source[column]}`).toBe(
        Number((source[column]!.split('.')[1] ?? '').replace('Z', '').padEnd(6, '0').slice(3, 6)),
      )
    }
    expect(row.last_seen_at).toBe(1767268800123456)
    // a nullable column with no value is null, not 0
    expect(toChangeRow(record({ updated_at: undefined as unknown as string }), at).updated_at).toBeNull()
  })

  it('exported for bq load: the stored ISO-8601 UTC string, date with dashes, time with colons', () => {
    const row = toLoadRow(seen, at) as unknown as Record<string, unknown>
    for (const column of timestampColumns) {
      expect(row[column], column).toBe(source[column])
      expect(row[column], column).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/)
    }
  })

  it('epochMicros refuses what is not an instant after 1970 (a row must never carry NaN, which JSON writes as null)', () => {
    expect(epochMicros('1970-01-01T00:00:00.000001Z')).toBe(1)
    expect(epochMicros('2026-01-01T01:00:00.5+01:00')).toBe(Date.parse('2026-01-01T00:00:00.500Z') * 1000)
    for (const bad of ['', 'yesterday', '1969-12-31T23:59:59.000Z']) expect(() => epochMicros(bad), bad).toThrow(RangeError)
  })
})

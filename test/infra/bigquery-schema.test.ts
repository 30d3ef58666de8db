import { describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { canonicalJson } from '@lsv/shared/contract/canonical-json.ts'
import { CONTACT_CHANGES_SCHEMA_FILE } from '@lsv/shared/contract/generated-files.ts'
import { CHANGE_ROW_BIGQUERY_SCHEMA, toChangeRow } from '@lsv/shared/domain/contacts/change-row.ts'
import { baseRecord } from '../outbound/records.ts'
import { INFRA_DIR } from './hcl.ts'

const STALE = 'is stale: run `npm run generate` and commit the result'

describe('BigQuery contact_changes schema', () => {
  it('infra/bigquery/contact_changes.schema.json equals CHANGE_ROW_BIGQUERY_SCHEMA', () => {
    const committed = readFileSync(CONTACT_CHANGES_SCHEMA_FILE, 'utf8')
    expect(committed === canonicalJson(CHANGE_ROW_BIGQUERY_SCHEMA), `infra/bigquery/contact_changes.schema.json ${STALE}`).toBe(true)
  })

  it('has exactly the columns of a change row, in order', () => {
    const record = baseRecord()
    expect(CHANGE_ROW_BIGQUERY_SCHEMA.map((f) => f.name)).toEqual(Object.keys(toChangeRow(record, '2026-01-02T00:00:00.000Z')))
  })

  it('names every column the contacts_latest view and the table partitioning use', () => {
    const tf = readFileSync(`${INFRA_DIR}/bigquery.tf`, 'utf8')
    const names = new Set(CHANGE_ROW_BIGQUERY_SCHEMA.map((f) => f.name))
    const partitionField = tf.match(/time_partitioning \{[^}]*field\s*=\s*"([a-z_]+)"/)?.[1]
    expect(partitionField && names.has(partitionField), `partition field ${partitionField}`).toBe(true)
    const clustering = tf.match(/clustering\s*=\s*\[([^\]]*)\]/)?.[1] ?? ''
    for (const c of clustering.match(/[a-z_]+/g) ?? []) expect(names.has(c), `clustering column ${c}`).toBe(true)
    const partitionBy = tf.match(/PARTITION BY ([a-z_, ]+) ORDER BY ([a-z_]+)/)
    expect(partitionBy).toBeTruthy()
    for (const c of [...partitionBy![1]!.split(',').map((s) => s.trim()), partitionBy![2]!]) expect(names.has(c), `view column ${c}`).toBe(true)
    // the partition column must be REQUIRED TIMESTAMP so every row lands in a partition
    expect(CHANGE_ROW_BIGQUERY_SCHEMA.find((f) => f.name === 'changed_at')).toMatchObject({ type: 'TIMESTAMP', mode: 'REQUIRED' })
  })
})

/**
 * `npm run generate`: writes the committed generated files from code.
 * - shared/generated/contract-2026-09-04.schema.json: the JSON Schema document (GET /api/v1/schema)
 * - shared/generated/openapi.json: the OpenAPI 3.1.0 document (GET /api/v1/openapi.json)
 * - shared/generated/openapi.{portal,edge}.json: each host's operations alone (`?host=`)
 * - infra/bigquery/contact_changes.schema.json: the BigQuery table schema of contact changes
 * - README.md's configuration table (between its markers), from the environment schema
 * Stable key order, trailing newline. test/contract/drift.test.ts,
 * test/infra/bigquery-schema.test.ts and test/config/readme-table.test.ts fail when they are stale.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { canonicalJson } from '@lsv/shared/contract/canonical-json.ts'
import { buildContractSchemaDocument } from '@lsv/shared/contract/schema-document.ts'
import { CONTACT_CHANGES_SCHEMA_FILE, CONTRACT_SCHEMA_FILE, GENERATED_DIR, OPENAPI_FILE, OPENAPI_HOST_FILES } from '@lsv/shared/contract/generated-files.ts'
import { CHANGE_ROW_BIGQUERY_SCHEMA } from '@lsv/shared/domain/contacts/change-row.ts'
import { withConfigurationTable } from '@lsv/shared/config/readme-table.ts'
import { buildOpenApiDocument } from './lib/openapi/build.ts'
import { hostOpenApiDocument } from './lib/openapi/hosts.ts'

function write(file: string, text: string): void {
  const unchanged = existsSync(file) && readFileSync(file, 'utf8') === text
  if (!unchanged) writeFileSync(file, text)
  console.log(`${unchanged ? 'unchanged' : 'wrote    '} ${relative(process.cwd(), file)}`)
}

mkdirSync(GENERATED_DIR, { recursive: true })
write(CONTRACT_SCHEMA_FILE, canonicalJson(buildContractSchemaDocument()))
const openApi = await buildOpenApiDocument()
write(OPENAPI_FILE, canonicalJson(openApi))
for (const host of ['portal', 'edge'] as const) write(OPENAPI_HOST_FILES[host], canonicalJson(hostOpenApiDocument(openApi, host)))
mkdirSync(dirname(CONTACT_CHANGES_SCHEMA_FILE), { recursive: true })
write(CONTACT_CHANGES_SCHEMA_FILE, canonicalJson(CHANGE_ROW_BIGQUERY_SCHEMA))
const README = join(import.meta.dirname, '..', 'README.md')
write(README, withConfigurationTable(readFileSync(README, 'utf8')))

import { fileURLToPath } from 'node:url'
import { CONTRACT_VERSION } from './version.ts'

/**
 * Where the committed generated files live (shared/generated/). `npm run generate`
 * (scripts/generate-contract-files.ts) writes them; the drift tests compare them with a fresh
 * in-memory build.
 */
export const GENERATED_DIR = fileURLToPath(new URL('../../generated/', import.meta.url))
export const CONTRACT_SCHEMA_FILE = fileURLToPath(new URL(`../../generated/contract-${CONTRACT_VERSION}.schema.json`, import.meta.url))
export const OPENAPI_FILE = fileURLToPath(new URL('../../generated/openapi.json', import.meta.url))
/** The OpenAPI document of each host's operations alone, for code generators (`GET /api/v1/openapi.json?host=`). */
export const OPENAPI_HOST_FILES = {
  portal: fileURLToPath(new URL('../../generated/openapi.portal.json', import.meta.url)),
  edge: fileURLToPath(new URL('../../generated/openapi.edge.json', import.meta.url)),
} as const
/** The BigQuery `contact_changes` table schema (CHANGE_ROW_BIGQUERY_SCHEMA); Terraform and `bq load` read it. */
export const CONTACT_CHANGES_SCHEMA_FILE = fileURLToPath(new URL('../../../infra/bigquery/contact_changes.schema.json', import.meta.url))

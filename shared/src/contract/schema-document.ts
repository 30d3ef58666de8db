import type { TSchema } from 'typebox'
import { CONTRACT_VERSION } from './version.ts'
import { sortKeysDeep } from './canonical-json.ts'
import { MissingReasonSchema } from './common.ts'
import {
  Contact,
  ContactCompany,
  ContactHandles,
  ContactIdentity,
  ContactLinks,
  ContactLocation,
  ContactMissing,
  ContactProvenance,
  CustomField,
  EmailHandle,
  PhoneHandle,
  Trait,
} from './contact.ts'
import { ContactList } from './contact-list.ts'
import { FieldPolicy, MissingReasonCounts } from './field-policy.ts'
import { WebhookEventV2, WebhookVisit } from './webhook-event.ts'

/**
 * The contract as a JSON Schema 2020-12 document (contract 4.1), served by `GET /api/v1/schema`
 * and committed as shared/generated/contract-2026-09-04.schema.json.
 *
 * `$id` is fixed and independent of any deployment, so the document is byte-identical on every
 * host and a consumer can cache it by `$id`.
 */
export const CONTRACT_SCHEMA_ID = `https://schemas.lsv.dev/contract/${CONTRACT_VERSION}/schema.json`
export const CONTRACT_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'
const CONTRACT_SCHEMA_TITLE = `Contact Ingestion, Link Minting and Outbound Event Contract ${CONTRACT_VERSION}`

/** The four top-level definitions the contract names (section 4.1). */
const CONTRACT_DEF_NAMES = ['Contact', 'ContactList', 'FieldPolicy', 'WebhookEventV2'] as const
export type ContractDefName = (typeof CONTRACT_DEF_NAMES)[number]

/**
 * Every schema that becomes its own `$defs` entry, keyed by its `title`. Wherever one of them
 * is nested inside another, the document carries `{"$ref": "#/$defs/<title>"}` instead.
 */
const NAMED_SCHEMAS: readonly TSchema[] = [
  Contact,
  ContactList,
  FieldPolicy,
  WebhookEventV2,
  ContactIdentity,
  ContactCompany,
  ContactLocation,
  ContactHandles,
  EmailHandle,
  PhoneHandle,
  Trait,
  CustomField,
  ContactMissing,
  MissingReasonSchema,
  ContactProvenance,
  ContactLinks,
  MissingReasonCounts,
  WebhookVisit,
]

function titleOf(schema: unknown): string | null {
  const title = (schema as { title?: unknown } | null)?.title
  return typeof title === 'string' ? title : null
}

/** Plain-JSON copy of a schema in which named sub-schemas become internal `$ref`s. */
function withRefs(value: unknown, names: ReadonlySet<string>, isRoot: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => withRefs(v, names, false))
  if (value === null || typeof value !== 'object') return value
  const title = titleOf(value)
  if (!isRoot && title !== null && names.has(title)) return { $ref: `#/$defs/${title}` }
  const out: Record<string, unknown> = {}
  // Object.keys skips TypeBox's non-enumerable bookkeeping (`~kind`, `~optional`).
  for (const key of Object.keys(value)) out[key] = withRefs((value as Record<string, unknown>)[key], names, false)
  return out
}

export interface ContractSchemaDocument {
  $schema: typeof CONTRACT_SCHEMA_DIALECT
  $id: string
  title: string
  description: string
  'x-service-contract-version': typeof CONTRACT_VERSION
  $defs: Record<string, unknown>
}

/** Builds the document; deterministic (keys sorted at every depth), a fresh object per call. */
export function buildContractSchemaDocument(): ContractSchemaDocument {
  const names = new Set<string>()
  for (const schema of NAMED_SCHEMAS) {
    const title = titleOf(schema)
    if (title === null || names.has(title)) throw new Error(`contract schema without a unique title: ${String(title)}`)
    names.add(title)
  }
  const defs: Record<string, unknown> = {}
  for (const schema of NAMED_SCHEMAS) defs[titleOf(schema)!] = withRefs(schema, names, true)
  return sortKeysDeep({
    $schema: CONTRACT_SCHEMA_DIALECT,
    $id: CONTRACT_SCHEMA_ID,
    title: CONTRACT_SCHEMA_TITLE,
    description: 'Declares Contact, ContactList, FieldPolicy and WebhookEventV2 (under $defs) and the nested definitions they reference.',
    'x-service-contract-version': CONTRACT_VERSION,
    $defs: defs,
  })
}

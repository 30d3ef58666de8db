import type { TSchema } from 'typebox'
import { buildContractSchemaDocument } from '@lsv/shared/contract/schema-document.ts'
import { ErrorEnvelope, ErrorEnvelopeWithIssues, ValidationIssue } from '@lsv/shared/contract/errors.ts'

const COMPONENT_PREFIX = '#/components/schemas/'

/** Schemas outside the contract document that operations share: the failure envelopes. */
const SHARED_SCHEMAS: readonly TSchema[] = [ErrorEnvelope, ErrorEnvelopeWithIssues, ValidationIssue]

function titleOf(value: unknown): string | null {
  const title = (value as { title?: unknown } | null)?.title
  return typeof title === 'string' ? title : null
}

/**
 * `components.schemas` of the OpenAPI document: the contract's `$defs` (Contact, ContactList,
 * FieldPolicy, WebhookEventV2 and their parts; refs rewritten to `#/components/schemas/...`) and
 * the failure envelopes, each under its `title`.
 */
export function namedComponentSchemas(): Record<string, unknown> {
  const defs = buildContractSchemaDocument().$defs
  const contract = JSON.parse(JSON.stringify(defs).replaceAll('"#/$defs/', `"${COMPONENT_PREFIX}`)) as Record<string, unknown>
  const shared = Object.fromEntries(SHARED_SCHEMAS.map((s) => [titleOf(s)!, JSON.parse(JSON.stringify(s)) as unknown]))
  return { ...shared, ...contract }
}

/**
 * Replaces, anywhere below `node`, every schema whose `title` names a component by a `$ref` to it
 * (in place; the component's own root is kept). Routes declare the TypeBox schema of their wire
 * shape (one schema per shape, titled), so a generated client sees `Contact`, not a copy.
 */
export function refNamedSchemas(node: unknown, names: ReadonlySet<string>, isComponentRoot = false): unknown {
  if (Array.isArray(node)) return node.map((v) => refNamedSchemas(v, names))
  if (node === null || typeof node !== 'object') return node
  // (a property named `title` is an object, never a string: titleOf ignores it)
  const title = titleOf(node)
  if (!isComponentRoot && title !== null && names.has(title)) return { $ref: `${COMPONENT_PREFIX}${title}` }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) out[key] = refNamedSchemas(value, names)
  return out
}

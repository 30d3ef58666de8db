import { Type, type TSchema } from 'typebox'
import { CONTRACT_VERSION } from './version.ts'

/**
 * Building blocks shared by the wire schemas (contract 2026-09-04). In the contract's nested
 * objects a member is "`string` or `null` unless stated", hence the nullable helpers.
 */

/** `string` or `null`, optionally with a format (`uri`, `email`, `date-time`). */
export function NullableString(options: { format?: 'uri' | 'email' | 'date-time' | 'uuid'; description?: string } = {}) {
  const { description, ...stringOptions } = options
  return Type.Union([Type.String(stringOptions), Type.Null()], description ? { description } : {})
}

/**
 * A UUID (RFC 9562). Either case is accepted, as RFC 9562 reads them; route validation hands the
 * value on lower case, the case ids are stored and answered in (http/uuid-case.ts). Only a place
 * declared with this format is lower-cased, so an id that is not a UUID must not use it.
 */
export function Uuid(options: { minLength?: number; maxLength?: number; description?: string } = {}) {
  return Type.String({ format: 'uuid', ...options })
}

/** `boolean` or `null`. */
export function NullableBoolean(description?: string) {
  return Type.Union([Type.Boolean(), Type.Null()], description ? { description } : {})
}

/** `<schema>` or `null`. */
export function Nullable<T extends TSchema>(schema: T, description?: string) {
  return Type.Union([schema, Type.Null()], description ? { description } : {})
}

/**
 * The response of a status without a body (204). `type: 'null'` is what @fastify/swagger reads
 * as "no content"; the static type is `undefined`, so the handler sends nothing:
 * `reply.code(204).send()`.
 */
export function NoContent(description: string) {
  return Type.Unsafe<undefined>({ type: 'null', description })
}

/** `contract_version`: the literal dated version. */
export function ContractVersionLiteral() {
  return Type.Literal(CONTRACT_VERSION, { description: 'the dated contract version' })
}

/** The five closed reasons a key of K carries no value (contract 2.2). */
export const MISSING_REASONS = ['no_source', 'not_enriched', 'unmapped', 'withheld_compliance', 'withheld_tier'] as const
export type MissingReason = (typeof MISSING_REASONS)[number]

export const MissingReasonSchema = StringEnum(MISSING_REASONS, { title: 'MissingReason' })

/** A string enum that also states `type: string` (friendlier to OpenAPI code generators). */
export function StringEnum<const T extends readonly string[]>(values: T, options: { title?: string; description?: string; default?: T[number] } = {}) {
  return Type.Enum([...values] as T[number][], { type: 'string', ...options })
}

/** An integer enum that also states `type: integer`. */
export function IntegerEnum<const T extends readonly number[]>(values: T, options: { description?: string } = {}) {
  return Type.Enum([...values] as T[number][], { type: 'integer', ...options })
}

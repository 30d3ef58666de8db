import { Type } from 'typebox'
import { RotateBody } from '@lsv/shared/contract/admin.ts'
import type { FieldMapping } from '@lsv/shared/model/records.ts'
import { checkAgainst, fieldValue, listOf, type FieldErrors, type FormFields } from '../kit/forms.ts'

/** The screen's route parameters and queries (one schema per shape). */
export const ConnectionParams = Type.Object({ connectionId: Type.String() })
export const KeyParams = Type.Object({ connectionId: Type.String(), keyId: Type.String() })
export const LocationParams = Type.Object({ connectionId: Type.String(), locationId: Type.String() })
export const FlashQuery = Type.Object({ flash: Type.Optional(Type.String()) })
/** A query's list of values: a name given once arrives as a string, several times as a list. */
const QueryList = Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())]))
/**
 * The mapping rows a page is opened with (the review, the editor reopened from it), and the
 * sample pasted with them (reviewPath carries it when it fits the address): nothing stored.
 */
export const MappingRowsQuery = Type.Object({
  flash: Type.Optional(Type.String()),
  from: QueryList,
  to: QueryList,
  rows: Type.Optional(Type.String()),
  sample: Type.Optional(Type.String()),
  sample_not_kept: Type.Optional(Type.Literal('1')),
})
/** The revoke question's grace (the row's choice), as the form sent it. */
export const GraceQuery = Type.Object({ grace_seconds: Type.Optional(Type.String()) })

/** A form's integer field: the number, or the text itself (so the schema's message names it). */
function integerOf(fields: FormFields | undefined, name: string): number | string | undefined {
  const v = fieldValue(fields, name).trim()
  if (v === '') return undefined
  return /^\d+$/.test(v) ? Number(v) : v
}

/**
 * The grace a rotation or revocation form chose, checked against the management API's schema:
 * the seconds (undefined when the form sent none), or the form's error in the schema's words.
 */
export function graceOf(fields: FormFields | undefined): { ok: true; seconds: number | undefined } | { ok: false; errors: FieldErrors } {
  const grace = integerOf(fields, 'grace_seconds')
  const invalid = checkAgainst(RotateBody, grace === undefined ? {} : { grace_seconds: grace })
  if (invalid) return { ok: false, errors: { '': `Grace: ${Object.values(invalid)[0]}` } }
  return { ok: true, seconds: grace as number | undefined }
}

/**
 * The mapping editor's rows. A row without a key is skipped whatever its target: clearing the key
 * removes the row (the editor starts from the fallback's six rows, each with its target chosen).
 */
export function rowsOf(fields: FormFields): FieldMapping[] {
  return typedRowsOf(fields).filter((m) => m.from !== '')
}

/** Every row as typed, blank ones included (Add a row and Remove keep the editor as it was). */
export function typedRowsOf(fields: FormFields): FieldMapping[] {
  const from = listOf(fields, 'from')
  const to = listOf(fields, 'to')
  const rows: FieldMapping[] = []
  for (let i = 0; i < Math.max(from.length, to.length); i++) rows.push({ from: (from[i] ?? '').trim(), to: to[i] ?? '' })
  return rows
}

/** Mapping rows carried in a query (reviewPath): present only when the query says how many. */
export function queryRows(query: { from?: string | string[]; to?: string | string[]; rows?: string }): FieldMapping[] | undefined {
  if (query.rows === undefined) return undefined
  return rowsOf({ ...(query.from === undefined ? {} : { from: query.from }), ...(query.to === undefined ? {} : { to: query.to }) })
}

import type { ErrorObject } from 'ajv/dist/2020.js'
import type { ValidationIssue } from '../errors/app-error.ts'

/**
 * The most issues a validation error lists (in `issues`, and in the message of a portal page).
 * Ajv collects every problem of a body; a hostile 2 MiB body has hundreds of thousands, and
 * listing them all made a 20.9 MB answer. The first ones say what is wrong; the answer stays a
 * few KiB (docs/architecture.md, "Before the caller is known").
 */
export const MAX_ISSUES = 10

/** Ajv errors -> the contract's `issues` (`code`, `message`, `path` as a JSON pointer), the first MAX_ISSUES. */
export function issuesFromAjv(errors: readonly Partial<ErrorObject>[] | undefined | null): ValidationIssue[] {
  if (!errors) return []
  return errors.slice(0, MAX_ISSUES).map((e) => {
    let path = e.instancePath ?? ''
    const params = (e.params ?? {}) as Record<string, unknown>
    if (e.keyword === 'required' && typeof params.missingProperty === 'string') path += `/${params.missingProperty}`
    if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') path += `/${params.additionalProperty}`
    return { code: e.keyword ?? 'invalid', message: e.message ?? 'is invalid', path: path === '' ? '/' : path }
  })
}

/** Longest message of one issue in an error's text (a message can quote a schema pattern). */
const MAX_MESSAGE_CHARS = 200

/**
 * fastify's `schemaErrorFormatter`: the error's text names the first MAX_ISSUES problems (its
 * default joins every one of them), and says how many more there were. `validation` keeps the
 * full list for issuesFromAjv, which takes the same first ones.
 */
export function formatSchemaErrors(errors: readonly Partial<ErrorObject>[], dataVar: string): Error {
  const shown = errors.slice(0, MAX_ISSUES).map((e) => `${dataVar}${e.instancePath ?? ''} ${(e.message ?? 'is invalid').slice(0, MAX_MESSAGE_CHARS)}`)
  const more = errors.length - shown.length
  return new Error(more > 0 ? `${shown.join(', ')} (and ${more} more)` : shown.join(', '))
}

import type { ErrorObject } from 'ajv/dist/2020.js'
import type { Static, TSchema } from 'typebox'
import { createAjv } from './ajv.ts'

// the first problem is the reason a payload is refused (one line in the log, and a malformed
// message costs little); no coercion, no defaults: a payload is checked as it came, never changed
const ajv = createAjv({ allErrors: false })

/** The outcome of checking a payload: the typed value, or why it is refused (the first problem). */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string }

/** `/seq must be >= 1`, `(root) must have required property 'shape'`. */
function describe(error: ErrorObject | undefined): string {
  if (!error) return 'invalid'
  return `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`
}

/**
 * A checker for one queue or task payload schema (contract/messages.ts), compiled once:
 * `const checkJob = messageCheck(DeliveryJob); const r = checkJob(JSON.parse(text))`.
 */
export function messageCheck<S extends TSchema>(schema: S): (value: unknown) => Checked<Static<S>> {
  const validate = ajv.compile<Static<S>>(schema)
  return (value) => (validate(value) ? { ok: true, value } : { ok: false, reason: describe(validate.errors?.[0]) })
}

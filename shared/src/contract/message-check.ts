import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import type { Static, TSchema } from 'typebox'

// ajv-formats is CommonJS; under native ESM its callable is the default export.
const addFormats = ((addFormatsImport as unknown as { default?: unknown }).default ?? addFormatsImport) as (ajv: Ajv2020) => Ajv2020

// strict: a schema keyword Ajv does not know is a mistake in the schema, not something to ignore;
// no coercion, no defaults: a payload is checked as it came, never changed
const ajv = addFormats(new Ajv2020({ allErrors: false, strict: true, strictTypes: false, coerceTypes: false, useDefaults: false }))

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

import type { Static, TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { App } from '@lsv/shared/http/base-app.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'

/** A parsed HTML form: a field sent once is a string, a field sent several times a list. */
export type FormFields = Record<string, string | string[]>

/** The largest form the portal accepts (the mapping preview's sample record is the largest field). */
const FORM_BODY_LIMIT = 256 * 1024

/**
 * HTML forms post `application/x-www-form-urlencoded`. Registered in the portal screens' scope
 * only: everywhere else on portal-api every body is JSON (http/json-body.ts), which automation
 * platforms send with any content type. URLSearchParams is the WHATWG parser browsers encode
 * for, so `+`, percent escapes and repeated names mean what the browser meant.
 */
export function registerFormParser(scope: App): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    const fields: FormFields = Object.create(null) as FormFields
    for (const [name, value] of new URLSearchParams(String(body))) {
      const had = fields[name]
      if (had === undefined) fields[name] = value
      else fields[name] = Array.isArray(had) ? [...had, value] : [had, value]
    }
    done(null, fields)
  })
}

const isFormFields = (body: unknown): body is FormFields =>
  typeof body === 'object' &&
  body !== null &&
  !Array.isArray(body) &&
  Object.values(body).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((s) => typeof s === 'string')))

/** The form a request carries (what registerFormParser makes), or undefined for no body or any other. */
export function formOf(body: unknown): FormFields | undefined {
  return isFormFields(body) ? body : undefined
}

/** Every value of a field, as a list (a field sent once or not at all included). */
export function listOf(fields: FormFields | undefined, name: string): string[] {
  const v = fields?.[name]
  if (v === undefined) return []
  return Array.isArray(v) ? v : [v]
}

/** The one value of a field (the last one when sent several times), or '' when absent. */
export function fieldValue(fields: FormFields | undefined, name: string): string {
  const all = listOf(fields, name)
  return all.length ? all[all.length - 1]! : ''
}

/** Messages per field (a JSON pointer such as `/key`, or '' for the form as a whole). */
export type FieldErrors = Record<string, string>

/**
 * The form's values checked against the same contract schema the management API validates its
 * JSON body with: a field's message is the schema's, next to the field.
 */
export function checkAgainst(schema: TSchema, value: unknown): FieldErrors | null {
  const checked = checkForm(schema, value)
  return checked.ok ? null : checked.errors
}

/** As checkAgainst, with the value typed by the schema once it passes (no cast at the call). */
export function checkForm<S extends TSchema>(schema: S, value: unknown): { ok: true; value: Static<S> } | { ok: false; errors: FieldErrors } {
  if (Value.Check(schema, value)) return { ok: true, value }
  const errors: FieldErrors = {}
  for (const e of Value.Errors(schema, value)) {
    const path =
      e.keyword === 'required' && typeof (e.params as { requiredProperties?: string[] }).requiredProperties?.[0] === 'string'
        ? `/${(e.params as { requiredProperties: string[] }).requiredProperties[0]}`
        : e.instancePath
    errors[path] ??= e.message
  }
  return { ok: false, errors }
}

/**
 * A domain error as field errors: `invalid payload` carries issues with paths (the domain's own
 * messages); any other 4xx (conflict, forbidden) is a message for the whole form. A 404 and
 * anything else is rethrown (404 page, 500 page).
 */
export function fieldErrorsOf(err: unknown): FieldErrors {
  if (isAppError(err) && err.status !== 404 && err.status < 500) {
    if (err.issues?.length) return Object.fromEntries(err.issues.map((i) => [i.path, i.message]))
    return { '': err.message }
  }
  throw err
}

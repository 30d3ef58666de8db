import type { Static, TSchema } from 'typebox'
import { Value } from 'typebox/value'
import type { App } from '@lsv/shared/http/base-app.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { MAX_ISSUES } from '@lsv/shared/http/validation.ts'
import { fieldMessage } from './field-messages.ts'

/** A parsed HTML form: a field sent once is a string, a field sent several times a list. */
export type FormFields = Record<string, string | string[]>

/**
 * The largest form a screen accepts by default: a form is a few fields. The field mapping
 * editor's two routes (mappings, preview) carry a sample record and declare
 * MAPPING_FORM_BODY_LIMIT instead.
 */
const FORM_BODY_LIMIT = 64 * 1024
/** The mapping editor's forms: its rows and the preview's sample record. */
export const MAPPING_FORM_BODY_LIMIT = 256 * 1024

/**
 * HTML forms post `application/x-www-form-urlencoded`, and that is the only body the screens'
 * scope parses: the JSON parser every other portal-api route shares (http/json-body.ts, for
 * automation platforms that send JSON with any content type) is removed here, so any other
 * content type is 415 and a form is never read as JSON (the portal's own script posts
 * URLSearchParams too: assets/portal.js). Each route's body limit is at most
 * MAPPING_FORM_BODY_LIMIT, FORM_BODY_LIMIT unless it declares one. URLSearchParams is the WHATWG
 * parser browsers encode for, so `+`, percent escapes and repeated names mean what the browser
 * meant.
 */
export function registerFormParser(scope: App): void {
  scope.addHook('onRoute', (route) => {
    route.bodyLimit = Math.min(route.bodyLimit ?? FORM_BODY_LIMIT, MAPPING_FORM_BODY_LIMIT)
  })
  scope.removeAllContentTypeParsers()
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const fields: FormFields = Object.create(null) as FormFields
    for (const [name, value] of new URLSearchParams(String(body))) {
      const had = fields[name]
      // pushed, not copied: a name repeated n times costs n, not n² / 2
      if (had === undefined) fields[name] = value
      else if (Array.isArray(had)) had.push(value)
      else fields[name] = [had, value]
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
 * JSON body with: a field's message is a sentence for that error (field-messages.ts), next to the field.
 */
export function checkAgainst(schema: TSchema, value: unknown): FieldErrors | null {
  const checked = checkForm(schema, value)
  return checked.ok ? null : checked.errors
}

/** As checkAgainst, with the value typed by the schema once it passes (no cast at the call). */
export function checkForm<S extends TSchema>(schema: S, value: unknown): { ok: true; value: Static<S> } | { ok: false; errors: FieldErrors } {
  if (Value.Check(schema, value)) return { ok: true, value }
  const errors: FieldErrors = {}
  let seen = 0
  for (const e of Value.Errors(schema, value)) {
    // the first MAX_ISSUES problems (http/validation.ts): the page stays small
    if (++seen > MAX_ISSUES) break
    const path =
      e.keyword === 'required' && typeof (e.params as { requiredProperties?: string[] }).requiredProperties?.[0] === 'string'
        ? `/${(e.params as { requiredProperties: string[] }).requiredProperties[0]}`
        : e.instancePath
    // a sentence for the tenant, not the schema's text (field-messages.ts)
    errors[path] ??= fieldMessage(e)
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

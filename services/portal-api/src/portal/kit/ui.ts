import { Type } from 'typebox'
import { html, type SafeHtml } from './html.ts'
import { ERROR_CODES, type ErrorCode } from '@lsv/shared/errors/codes.ts'
import type { FieldErrors } from './forms.ts'

/** The body schema of every portal form (values are checked per action against contract schemas). */
export const FormBody = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))

let counter = 0
/** A fresh element id (for label/input and error association on one page). */
export function uid(prefix: string): string {
  counter = (counter + 1) % 1_000_000
  return `${prefix}-${counter}`
}

/** The error of a field, shown under it and tied to it with aria-describedby. */
export function errorOf(errors: FieldErrors | null | undefined, path: string): string | null {
  return errors?.[path] ?? null
}

/** A labelled text input with its hint and error. */
export function textField(o: {
  label: string
  name: string
  value?: string
  hint?: string
  /** the rest of a hint longer than one line, behind "More" (help()) */
  more?: string
  error?: string | null
  type?: string
  required?: boolean
  id?: string
}): SafeHtml {
  const id = o.id ?? uid(o.name)
  const describedBy = [o.hint ? `${id}-hint` : '', o.error ? `${id}-error` : ''].filter(Boolean).join(' ')
  return html`<label for="${id}">${o.label}</label>
${o.hint ? (o.more ? help(o.hint, o.more, `${id}-hint`) : html`<p class="hint" id="${id}-hint">${o.hint}</p>`) : ''}
${o.error ? html`<p class="field-error" id="${id}-error">${o.error}</p>` : ''}
<input type="${o.type ?? 'text'}" id="${id}" name="${o.name}" value="${o.value ?? ''}"${o.required ? html` required` : ''}${describedBy ? html` aria-describedby="${describedBy}"` : ''}${o.error ? html` aria-invalid="true"` : ''}>`
}

/** A secret shown once, with a copy button (portal.js reveals it; without script, select and copy). */
export function secretOnce(label: string, secret: string, note: string): SafeHtml {
  const id = uid('secret')
  return html`<div class="secret" role="status">
<p><strong>${label}</strong> — ${note}</p>
<p><code id="${id}">${secret}</code></p>
<button type="button" class="copy" data-copy-target="${id}" hidden>Copy</button>
</div>`
}

/**
 * What a form-wide refusal says by default. fieldErrorsOf (forms.ts) keeps the envelope's text
 * ("conflict"), which names a code, not what happened; a form passes its own words for the codes
 * it can meet (a duplicate location) and the others read as these.
 */
const REFUSALS: Partial<Record<ErrorCode, string>> = {
  conflict: 'That already exists, so nothing was changed.',
  forbidden: 'This account may not do that. Nothing was changed.',
  invalid_payload: 'Something in the form was not valid. Nothing was changed.',
  rate_limited: 'Too many tries in a short time. Wait a minute and try again.',
}

/**
 * A form-wide error (a conflict, a refusal), shown at the top of the form, in this form's words when
 * it has some; the page's error summary (error-summary.ts) names it and is the one announced.
 */
export function formError(errors: FieldErrors | null | undefined, words: Partial<Record<ErrorCode, string>> = {}): SafeHtml | '' {
  const all = errors?.[''] ?? null
  if (!all) return ''
  const code = (Object.keys(ERROR_CODES) as ErrorCode[]).find((c) => ERROR_CODES[c].message === all)
  const said = code === undefined ? all : (words[code] ?? REFUSALS[code] ?? all)
  return html`<p class="field-error" id="${uid('form-error')}">${said}</p>`
}

/**
 * A table that may be wider than the screen (390 px): its box scrolls sideways, and, so a
 * keyboard can scroll it too, it takes focus (tabindex 0) as a named region; arrow keys then
 * scroll it (WCAG 2.1.1; axe's scrollable-region-focusable).
 */
export function scrollingTable(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${label}">${table}</div>`
}

/**
 * Help kept to one line (issue 29, "Help"): the short sentence shown, the rest behind a "More"
 * disclosure (a native `<details>`, so it opens without script). `id` names the short line, for
 * a field's `aria-describedby`.
 */
export function help(short: SafeHtml | string, more: SafeHtml | string, id?: string): SafeHtml {
  return html`<div class="help"><p class="hint"${id ? html` id="${id}"` : ''}>${short}</p> <details class="more"><summary>More</summary><div class="hint">${more}</div></details></div>`
}

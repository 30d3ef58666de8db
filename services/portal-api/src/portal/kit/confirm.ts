import { html, type SafeHtml } from './html.ts'
import { fieldValue, type FormFields } from './forms.ts'

/**
 * The question of a destructive action, without JavaScript: the action's first form (a GET, or a
 * post answered 303) leads to a page that asks, and its form repeats the fields with
 * `confirm=yes`; only that post acts. A reload of the question only asks again.
 */
const CONFIRM_FIELD = 'confirm'

/** true when the post is the confirmed one */
export const isConfirmed = (fields: FormFields | undefined): boolean => fieldValue(fields, CONFIRM_FIELD) === 'yes'

/** What a question page asks (one view model per question). */
export interface Question {
  /** what will happen, in words, naming what it happens to */
  what: SafeHtml
  /** where the confirmed form posts */
  action: string
  /** the fields of the first form, sent again */
  fields?: Record<string, string>
  /** the button's words, e.g. "Revoke key" */
  button: string
  /** where "Cancel" goes back to */
  cancel: string
}

/** The question's card: what happens, the confirming button (danger) and Cancel. */
export function questionView(q: Question): SafeHtml {
  const hidden = Object.entries(q.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  return html`<div class="confirm card" role="alert" id="confirm">
${q.what}
<form method="post" action="${q.action}" class="actions">
${hidden}<input type="hidden" name="${CONFIRM_FIELD}" value="yes">
<button type="submit" class="danger">${q.button}</button>
<a href="${q.cancel}">Cancel</a>
</form>
</div>`
}

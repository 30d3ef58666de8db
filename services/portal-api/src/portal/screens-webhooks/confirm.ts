import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { html, sendPage, type SafeHtml } from '../kit/page.ts'
import { fieldValue, type FormFields } from '../kit/forms.ts'
import { sessionOf } from '../session.ts'
import { WEBHOOKS_PATH } from './paths.ts'

/**
 * The confirmation step of a destructive webhook action, without JavaScript: the action's first
 * form (or a link) leads with a 303 to a GET page that asks, and repeats the fields with
 * `confirm=yes`; only that post acts (and answers 303). Every form answers a redirect, and a
 * reload of the question asks again: it never acts by itself.
 */
const CONFIRM_FIELD = 'confirm'

/** true when the post is the confirmed one */
export const isConfirmed = (fields: FormFields | undefined): boolean => fieldValue(fields, CONFIRM_FIELD) === 'yes'

export interface Confirmation {
  title: string
  /** what will happen, in words */
  what: SafeHtml
  /** where the confirmed form posts */
  action: string
  /** the fields of the first post, sent again */
  fields?: Record<string, string>
  /** the button's words, e.g. "Delete webhook" */
  button: string
  /** where "Cancel" goes back to */
  cancel: string
}

function confirmBody(c: Confirmation): SafeHtml {
  const hidden = Object.entries(c.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  return html`<div class="confirm card" role="alert" id="confirm">
${c.what}
<form method="post" action="${c.action}" class="actions">
${hidden}<input type="hidden" name="${CONFIRM_FIELD}" value="yes">
<button type="submit" class="danger">${c.button}</button>
<a href="${c.cancel}">Cancel</a>
</form>
</div>`
}

/** Answers the confirmation page for this request's account. */
export function sendConfirmation(request: FastifyRequest, reply: FastifyReply, c: Confirmation): FastifyReply {
  const { account }: { account: AccountRecord } = sessionOf(request)
  return sendPage(reply, { status: 200, account, current: WEBHOOKS_PATH, flash: null, title: c.title, body: confirmBody(c) })
}

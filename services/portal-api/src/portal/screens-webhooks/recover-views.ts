import type { IntegrationView } from '@lsv/shared/contract/admin.ts'
import { RECOVER_COUNT_CAP, RECOVER_MAX_DELIVERIES, type StatusCounts } from '@lsv/shared/domain/webhooks/recover.ts'
import { WEBHOOK_ACTION_WINDOWS } from '@lsv/shared/domain/webhooks/rate-limit.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { help } from '../kit/ui.ts'
import { inputValueOf, timeOf } from './delivery-filters.ts'
import { webhookPath } from './paths.ts'

const recoverPath = (integrationId: string) => `${webhookPath(integrationId)}/recover`
const retryWaitingPath = (integrationId: string) => `${webhookPath(integrationId)}/retry-waiting`
const sinceWords = (since: string) => html`${timeOf(since)}`
const { limit: REPLAY_LIMIT } = WEBHOOK_ACTION_WINDOWS.replay
// a count that reached the cap is a lower bound (statusCountsSince stops counting there)
const countWords = (n: number) => (n >= RECOVER_COUNT_CAP ? `at least ${n}` : `${n}`)

/** what a recover sends at most, in one line of help with the rest behind "More" */
const bounds = (id?: string) =>
  help(
    `At most ${RECOVER_MAX_DELIVERIES} failed deliveries per recover (the newest ones since that time), replayed oldest first.`,
    `Each replay counts in the account's replay limit (${REPLAY_LIMIT} a minute): when it is reached the rest stay failed, and recovering again from the same time later sends only those.`,
    id,
  )

/** The detail page's entry to recover: a GET form that leads to the confirmation page. */
export function recoverForm(i: IntegrationView): SafeHtml {
  return html`<section aria-labelledby="recover-h" id="recover">
<h2 id="recover-h">Recover failed deliveries</h2>
<p>Send again every delivery to this endpoint that failed since a time, for example after your endpoint was down. You confirm on the next page.</p>
<form method="get" action="${recoverPath(i.id)}" class="card">
<label for="recover-since">Failed since (UTC)</label>
<input type="datetime-local" id="recover-since" name="since" step="1" required aria-describedby="recover-hint">
${bounds('recover-hint')}
<p><button type="submit"${i.active ? '' : html` disabled`}>Review what would be sent</button></p>
${i.active ? '' : html`<p class="hint">Re-enable this webhook before recovering.</p>`}
</form>
<p>Fixed your endpoint? Deliveries still waiting for a retry can be sent now instead of at their next retry: <a href="${retryWaitingPath(i.id)}">Retry everything waiting</a> (you confirm on the next page).</p>
</section>`
}

/** What the recover confirmation shows: its view model. */
export interface RecoverConfirmView {
  integration: IntegrationView
  /** failed since this instant (ISO 8601) */
  since: string
  /** how many a recover would send now (0 while the webhook is disabled) */
  failed: number
  /** false when the plan stopped at its bound: there may be more */
  complete: boolean
  /** deliveries waiting for a retry, which a recover does not send */
  waiting: number
}

/** The confirmation step: what a recover would send, and the button that sends it. */
export function recoverConfirmBody(v: RecoverConfirmView): SafeHtml {
  const { integration: i, since, failed, complete, waiting } = v
  const back = webhookPath(i.id)
  return html`<p class="hint"><a href="${back}">Back to the webhook</a></p>
<section aria-labelledby="confirm-h" class="card">
<h2 id="confirm-h">Replay ${failed} failed ${failed === 1 ? 'delivery' : 'deliveries'}?</h2>
<dl class="kv">
<dt>Endpoint</dt><dd><code>${i.url}</code></dd>
<dt>Failed since</dt><dd>${sinceWords(since)}</dd>
<dt>To send again</dt><dd>${failed}${complete ? '' : html` (the most this recover takes: there may be more, recover again afterwards)`}</dd>
</dl>
${bounds()}
${
  failed === 0
    ? html`<p>Nothing failed since that time: nothing to send.</p><p><a href="${back}#recover">Choose another time</a></p>${waitingWords(i, waiting)}`
    : html`<form method="post" action="${recoverPath(i.id)}" class="actions">
<input type="hidden" name="since" value="${since}">
<button type="submit" class="danger">Replay ${failed} failed ${failed === 1 ? 'delivery' : 'deliveries'}</button>
<a href="${back}#recover">Cancel</a>
</form>`
}
${failed === 0 ? '' : waitingWords(i, waiting)}
</section>`
}

/** The deliveries waiting for a retry, named next to a recover: they are not failed, so a recover does not send them. */
function waitingWords(i: IntegrationView, waiting: number): SafeHtml | string {
  if (waiting === 0) return ''
  return html`<p>${waiting} ${waiting === 1 ? 'delivery is' : 'deliveries are'} still waiting for a retry (not failed, so a recover does not send ${waiting === 1 ? 'it' : 'them'}): <a href="${retryWaitingPath(i.id)}">Retry everything waiting now</a></p>`
}

/** What the "retry everything waiting" confirmation shows: its view model. */
export interface RetryWaitingConfirmView {
  integration: IntegrationView
  /** how many would be sent now (0 while the webhook is disabled) */
  waiting: number
  /** false when the plan stopped at its bound: there may be more */
  complete: boolean
}

/** The confirmation step of "retry everything waiting": how many, and the button that sends them now. */
export function retryWaitingConfirmBody(v: RetryWaitingConfirmView): SafeHtml {
  const { integration: i, waiting, complete } = v
  const back = webhookPath(i.id)
  return html`<p class="hint"><a href="${back}">Back to the webhook</a></p>
<section aria-labelledby="confirm-h" class="card">
<h2 id="confirm-h">Send ${waiting} waiting ${waiting === 1 ? 'delivery' : 'deliveries'} now?</h2>
<dl class="kv">
<dt>Endpoint</dt><dd><code>${i.url}</code></dd>
<dt>Waiting for a retry</dt><dd>${waiting}${complete ? '' : html` (the most one retry takes: there may be more, retry again afterwards)`}</dd>
</dl>
${help(
  'Each one is sent now instead of at its next retry, and starts a new run of attempts.',
  `At most ${RECOVER_MAX_DELIVERIES} at once, oldest first; each counts in the account's replay limit (${REPLAY_LIMIT} a minute): when it is reached the rest keep waiting for their retry.`,
)}
${
  waiting === 0
    ? html`<p>No delivery is waiting for a retry: nothing to send.</p><p><a href="${back}#deliveries">Back to the delivery log</a></p>`
    : html`<form method="post" action="${retryWaitingPath(i.id)}" class="actions">
<button type="submit" class="danger">Send ${waiting} waiting ${waiting === 1 ? 'delivery' : 'deliveries'} now</button>
<a href="${back}#recover">Cancel</a>
</form>`
}
</section>`
}

interface RecoverOutcome {
  since: string
  found: number
  replayed: number
  retryAfter: number | null
}

/** What a recover's result page shows: its view model. */
export interface RecoverResultView {
  integration: IntegrationView
  outcome: RecoverOutcome
  /** the deliveries since the recover's time, by status, as they stand now */
  counts: StatusCounts
}

/** The result of a recover, with the live state of the deliveries since its time (its progress). */
export function recoverResultBody(v: RecoverResultView): SafeHtml {
  const { integration: i, outcome, counts } = v
  const back = webhookPath(i.id)
  const held = outcome.found - outcome.replayed
  const logQuery = new URLSearchParams({ from: inputValueOf(outcome.since) }).toString()
  return html`<p class="hint"><a href="${back}">Back to the webhook</a></p>
<section aria-labelledby="result-h" id="recover-result">
<h2 id="result-h">${outcome.replayed} ${outcome.replayed === 1 ? 'delivery' : 'deliveries'} queued again</h2>
<dl class="kv">
<dt>Failed since</dt><dd>${sinceWords(outcome.since)}</dd>
<dt>Found failed</dt><dd>${outcome.found}</dd>
<dt>Queued again</dt><dd>${outcome.replayed}</dd>
</dl>
${
  held > 0
    ? html`<div class="error-summary" role="alert"><p>The replay limit (${REPLAY_LIMIT} a minute) held back ${held} ${held === 1 ? 'delivery' : 'deliveries'}. Recover again from the same time in ${outcome.retryAfter ?? 60} seconds: the ones queued now are no longer failed, so they are not sent twice.</p>
<form method="get" action="${recoverPath(i.id)}"><input type="hidden" name="since" value="${inputValueOf(outcome.since)}"><button type="submit">Recover again from the same time</button></form></div>`
    : ''
}
</section>
<section aria-labelledby="progress-h" id="recover-progress">
<h2 id="progress-h">Progress</h2>
<p>Every delivery to this endpoint since that time, as it stands now. Reload to follow the replays.</p>
<dl class="stats">
<div><dt>Waiting to be sent</dt><dd>${countWords(counts.pending)}</dd></div>
<div><dt>Retrying</dt><dd>${countWords(counts.retrying)}</dd></div>
<div><dt>Succeeded</dt><dd>${countWords(counts.succeeded)}</dd></div>
<div><dt>Failed</dt><dd>${countWords(counts.failed)}</dd></div>
</dl>
${counts.complete ? '' : html`<p class="hint">Each status is counted up to ${RECOVER_COUNT_CAP}: "at least" means there are more.</p>`}
<p><a href="${back}?${logQuery}#deliveries">See these deliveries in the log</a></p>
</section>`
}

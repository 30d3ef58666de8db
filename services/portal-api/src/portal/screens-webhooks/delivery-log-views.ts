import type { IntegrationView } from '@lsv/shared/contract/admin.ts'
import type { DeliveryKind, DeliveryLogEntry, DeliveryStatus } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { emptyState } from '../kit/empty-state.ts'
import { pager } from '../kit/pager.ts'
import { help } from '../kit/ui.ts'
import { longId } from '../kit/ids.ts'
import { when } from '../kit/time.ts'
import { badge } from '../kit/badge.ts'
import { inputValueOf, timeOf } from './delivery-filters.ts'
import { answerCell, statusBadge, testBadge } from './delivery-badges.ts'
import { recoverForm } from './recover-views.ts'
import { webhookPath } from './paths.ts'

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'retrying', 'succeeded', 'failed']
export const DELIVERY_KINDS: readonly DeliveryKind[] = ['test', 'real']
const KIND_TEXT: Record<DeliveryKind, string> = { test: 'test events only', real: 'real events only' }
const CODE_CHOICES: ReadonlyArray<readonly [string, string]> = [
  ['2xx', '2xx success'],
  ['3xx', '3xx redirect'],
  ['4xx', '4xx client error'],
  ['5xx', '5xx server error'],
  ['none', 'no answer (timeout, refused…)'],
]

/**
 * The id of the log's rows and what a post says about them: the redirects of "Send test event" and
 * Replay end in `#delivery-log`, so the browser lands there (and a Tab goes on from there) instead
 * of at the top of a long page.
 */
export const DELIVERY_LOG_ID = 'delivery-log'

/** The delivery log's filters and page, as the filter form and the pager links carry them. */
export interface LogFilter {
  status: DeliveryStatus | undefined
  kind: DeliveryKind | undefined
  eventId: string | undefined
  cursor: string | undefined
  /** the page number the pager's links carry (display only; pager.ts) */
  page?: number
  /** last attempt's HTTP status as the form sent it: `4xx`, `404`, `none` (delivery-filters.ts) */
  code?: string | undefined
  /** created at or after / before these instants (ISO 8601) */
  from?: string | undefined
  to?: string | undefined
}

/** The query of a log link with these filters (no cursor), ending in `&` when not empty. */
function filterQuery(f: LogFilter): string {
  const q = new URLSearchParams()
  if (f.status) q.set('status', f.status)
  if (f.kind) q.set('kind', f.kind)
  if (f.eventId) q.set('event_id', f.eventId)
  if (f.code) q.set('code', f.code)
  if (f.from) q.set('from', inputValueOf(f.from))
  if (f.to) q.set('to', inputValueOf(f.to))
  const text = q.toString()
  return text ? `${text}&` : ''
}

/** The filters in words, for an empty result. */
function filterWords(f: LogFilter): string {
  return [
    f.eventId ? `for event ${f.eventId}` : null,
    f.status ? `with status ${f.status}` : null,
    f.kind ? `among ${f.kind} events` : null,
    f.code ? (f.code === 'none' ? 'without an HTTP answer' : `answered ${f.code}`) : null,
    f.from ? `since ${inputValueOf(f.from).replace('T', ' ')} UTC` : null,
    f.to ? `before ${inputValueOf(f.to).replace('T', ' ')} UTC` : null,
  ]
    .filter(Boolean)
    .join(', ')
}

/** What the Deliveries section shows: its view model. */
export interface DeliveryLogView {
  integration: IntegrationView
  log: { data: DeliveryLogEntry[]; next_cursor: string | null }
  filter: LogFilter
  /** the most deliveries a page holds */
  pageSize: number
  /** the delivery the test event just made (`?sent=`): marked in its row, or said to be on its way */
  sent: string | null
}

function deliveryRow(integrationId: string, d: DeliveryLogEntry, active: boolean, sent: boolean): SafeHtml {
  const last = d.attempts.at(-1)
  return html`<tr>
<td>${longId(d.event_id, 'event id')}${testBadge(d.event_id)}${sent ? html` ${badge('just sent')}` : ''}</td>
<td>${statusBadge(d.status)}</td>
<td>${d.attempts.length}</td>
<td>${when(d.created_at)}</td>
<td>${answerCell(last)}</td>
<td>${last ? `${last.latency_ms} ms` : '—'}</td>
<td>${d.status === 'retrying' && d.next_attempt_at ? timeOf(d.next_attempt_at) : '—'}</td>
<td>${active ? html`<form method="post" action="${webhookPath(integrationId)}/deliveries/${encodeURIComponent(d.id)}/replay"><button type="submit" aria-label="Replay delivery of ${d.event_id}">Replay</button></form>` : '—'}</td>
<td><a href="${webhookPath(integrationId)}/deliveries/${encodeURIComponent(d.id)}" aria-label="Debug the delivery of ${d.event_id}">Debug</a></td>
</tr>`
}

/**
 * After "Send test event": the new delivery is the newest row, marked "just sent". When it is not
 * on this page (a filter hides it, or the log did not show it yet), the tenant is told it was sent
 * and given the unfiltered log to reload.
 */
function sentNote(v: DeliveryLogView): SafeHtml | '' {
  if (v.sent === null) return ''
  if (v.log.data.some((d) => d.id === v.sent)) return html`<p class="flash" role="status" id="sent-note">Test event sent: it is the row marked “just sent”.</p>`
  const again = `${webhookPath(v.integration.id)}?sent=${encodeURIComponent(v.sent)}#${DELIVERY_LOG_ID}`
  return html`<p class="flash" role="status" id="sent-note">Test event sent: it is not in the log yet. <a href="${again}">Reload to see it</a></p>`
}

function filterForm(base: string, filter: LogFilter): SafeHtml {
  return html`<form method="get" action="${base}#deliveries" class="actions" aria-label="Filter the delivery log">
<div><label for="status">Status</label>
<select id="status" name="status"><option value="">any</option>${DELIVERY_STATUSES.map((s) => html`<option value="${s}"${filter.status === s ? html` selected` : ''}>${s}</option>`)}</select></div>
<div><label for="kind">Events</label>
<select id="kind" name="kind"><option value="">test and real</option>${DELIVERY_KINDS.map((k) => html`<option value="${k}"${filter.kind === k ? html` selected` : ''}>${KIND_TEXT[k]}</option>`)}</select></div>
<div><label for="event-id">Event id</label>
<input type="text" id="event-id" name="event_id" maxlength="256" value="${filter.eventId ?? ''}" aria-describedby="event-id-hint" autocomplete="off"></div>
<div><label for="code">HTTP status</label>
<select id="code" name="code"><option value="">any</option>${CODE_CHOICES.map(([v, t]) => html`<option value="${v}"${filter.code === v ? html` selected` : ''}>${t}</option>`)}${filter.code && !CODE_CHOICES.some(([v]) => v === filter.code) ? html`<option value="${filter.code}" selected>exactly ${filter.code}</option>` : ''}</select></div>
<div><label for="from">From (UTC)</label>
<input type="datetime-local" id="from" name="from" step="1" value="${inputValueOf(filter.from)}"></div>
<div><label for="to">Before (UTC)</label>
<input type="datetime-local" id="to" name="to" step="1" value="${inputValueOf(filter.to)}"></div>
<button type="submit">Filter</button>
</form>
${help(
  html`Event id: the event's <code>id</code> in the body (the visit id), also sent as <code>X-Service-Idempotency-Key</code>.`,
  html`Your endpoint's <code>webhook-id</code> is the same id, unless the id holds a <code>.</code>, a space or a character outside printable ASCII, or starts with <code>msg_sha256_</code>: then <code>webhook-id</code> is <code>msg_sha256_</code> and the id's SHA-256 (base64url), and you find the delivery by the id itself (its Debug page shows both). HTTP status is your endpoint's answer to the last attempt; an exact code such as <code>404</code> also works in the address (<code>code=404</code>). Debug opens a delivery's attempts and its signed request.`,
  'event-id-hint',
)}`
}

/** The Deliveries section of a webhook's page: the filters, the log (newest first), its pager, recover. */
export function deliveriesSection(v: DeliveryLogView): SafeHtml {
  const { integration: i, log, filter, pageSize } = v
  const base = webhookPath(i.id)
  const query = filterQuery(filter)
  const words = filterWords(filter)
  return html`<section aria-labelledby="log-h" id="deliveries">
<h2 id="log-h">Deliveries</h2>
${filterForm(base, filter)}
<div id="${DELIVERY_LOG_ID}" tabindex="-1">
${sentNote(v)}
${
  log.data.length === 0
    ? words
      ? html`<p>No deliveries ${words}.</p>`
      : emptyState('No deliveries yet: events appear here as they are sent.', { href: '#test-h', text: 'Send a test event' })
    : html`<div class="table-wrap"><table>
<caption class="hint">Newest first. Response code and duration of the last attempt.</caption>
<thead><tr><th scope="col">Event id</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Created</th><th scope="col">Response</th><th scope="col">Duration</th><th scope="col">Next retry</th><th scope="col">Replay</th><th scope="col">Details</th></tr></thead>
<tbody>${log.data.map((d) => deliveryRow(i.id, d, i.active, d.id === v.sent))}</tbody></table></div>`
}
</div>
${pager({
  label: 'Delivery log pages',
  path: base,
  page: filter.page ?? 1,
  rows: log.data.length,
  size: pageSize,
  noun: 'deliveries',
  // a keyset log read newest first: forward only (the Newest link, or the browser's Back)
  prev: null,
  next: log.next_cursor ? `${query}cursor=${encodeURIComponent(log.next_cursor)}` : null,
  firstText: 'Newest',
  nextText: 'Older',
  away: filter.cursor !== undefined,
  firstQuery: query.replace(/&$/, ''),
  fragment: 'deliveries',
})}
${recoverForm(i)}
</section>`
}

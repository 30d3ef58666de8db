import type { AccountRecord } from '@lsv/shared/model/records.ts'
import type { IntegrationView } from '@lsv/shared/contract/admin.ts'
import type { DeliveryKind, DeliveryLogEntry, DeliveryStatus } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { TEST_EVENT_ID_PREFIX } from '@lsv/shared/domain/webhooks/test-event.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { emptyState } from '../kit/empty-state.ts'
import { pager } from '../kit/pager.ts'
import { outcomeChart } from '../kit/chart.ts'
import { help } from '../kit/ui.ts'
import { inputValueOf, timeOf } from './delivery-filters.ts'
import { longId } from '../kit/ids.ts'
import { recoverForm } from './recover-views.ts'
import type { EndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { healthCell, healthSection } from './endpoint-health.ts'
import { describeFields, endpointTitle } from './endpoint-fields.ts'

export const WEBHOOKS_PATH = '/portal/webhooks'
export const webhookPath = (id: string) => `${WEBHOOKS_PATH}/${encodeURIComponent(id)}`

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

/** A secret shown on this answer only (after create, reveal or rotate); never in a URL. */
export interface ShownSecret {
  secret: string
  why: 'created' | 'revealed' | 'rotated'
  previousExpiresAt: string | null
}

/** What the form sent back when it was refused, with the reason. */
export interface FormState {
  error: string
  url: string
  /** the endpoint's label and note (endpoint-fields.ts) */
  name: string
  description: string
  payloadVersion: string
  contactHandles: boolean
  sensitiveTraits: boolean
}

const RECEIVER_SNIPPET = `// npm install standardwebhooks
import { createServer } from 'node:http'
import { Webhook } from 'standardwebhooks'

const wh = new Webhook(process.env.WEBHOOK_SECRET) // whsec_…

createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk) => { body += chunk })
  req.on('end', () => {
    try {
      // verify the exact bytes received, before parsing them
      const event = wh.verify(body, req.headers)
      // event.id is the idempotency key: handle each id once
      res.writeHead(200).end()
    } catch {
      res.writeHead(400).end()
    }
  })
}).listen(3000)`

function tierBoxes(account: AccountRecord, values: { contactHandles: boolean; sensitiveTraits: boolean }, idPrefix: string): SafeHtml {
  const box = (name: string, tier: 2 | 3, label: string, checked: boolean) => {
    const permitted = account.permitted_tiers.includes(tier)
    const id = `${idPrefix}-${name}`
    return html`<label class="inline" for="${id}"><input type="checkbox" id="${id}" name="${name}" value="on"${checked ? html` checked` : ''}${permitted ? '' : html` disabled aria-describedby="${id}-hint"`}> ${label}</label>${permitted ? '' : html`<span class="hint" id="${id}-hint">(tier ${tier} is not in your plan)</span>`}`
  }
  return html`<fieldset><legend>Tiers released to this receiver</legend>
<p class="hint">Tier 1 (identity, company, location) is always sent.</p>
${box('contact_handles', 2, 'Tier 2: contact handles (emails, phones)', values.contactHandles)}
${box('sensitive_traits', 3, 'Tier 3: sensitive traits', values.sensitiveTraits)}
</fieldset>`
}

function versionSelect(id: string, value: string): SafeHtml {
  return html`<label for="${id}">Payload version</label>
<select id="${id}" name="payload_version">
<option value="2"${value === '2' ? html` selected` : ''}>2: visitor.identified (the contract's body)</option>
<option value="1"${value === '1' ? html` selected` : ''}>1: legacy (receives no v2 events)</option>
</select>`
}

function secretBox(shown: ShownSecret): SafeHtml {
  const lead =
    shown.why === 'created'
      ? "The signing secret of the new webhook. It is shown here now; you can reveal it again on the webhook's page."
      : shown.why === 'rotated'
        ? 'The new signing secret. Every delivery is signed with it from now on.'
        : 'The current signing secret.'
  return html`<div class="secret" role="status" id="secret-box">
<p>${lead}</p>
<p><code id="signing-secret">${shown.secret}</code> <button type="button" class="copy" data-copy-target="signing-secret" hidden>Copy</button></p>
${shown.previousExpiresAt ? html`<p>The previous secret also signs every delivery until <time datetime="${shown.previousExpiresAt}">${shown.previousExpiresAt}</time>: both signatures are in <code>webhook-signature</code>, so your receiver keeps verifying while you change its secret.</p>` : ''}
</div>`
}

export function listBody(
  account: AccountRecord,
  integrations: IntegrationView[],
  created: { integration: IntegrationView; secret: ShownSecret } | null,
  form: FormState | null,
  /** health at a glance per integration id (endpoint-health.ts); absent ones show "—" */
  health: ReadonlyMap<string, EndpointHealth> = new Map(),
): SafeHtml {
  const rows = integrations.map((i) => {
    const h = health.get(i.id)
    return html`<tr>
<td><a href="${webhookPath(i.id)}">${endpointTitle(i)}</a>${i.name ? html`<br><span class="hint">${i.url}</span>` : ''}${i.description ? html`<br><span class="hint">${i.description}</span>` : ''}</td>
<td>${i.payload_version}</td>
<td>${i.active ? (i.failing ? html`<strong class="bad-text">failing</strong> (${i.failing.percent} % of the threshold)` : 'active') : html`<strong>disabled</strong>${i.disabled_reason ? html` (${i.disabled_reason})` : ''}`}</td>
<td>${['1', i.tiers.contact_handles ? '2' : null, i.tiers.sensitive_traits ? '3' : null].filter(Boolean).join(', ')}</td>
<td>${h ? healthCell(h) : '—'}</td>
</tr>`
  })
  return html`
${
  created
    ? html`<section aria-labelledby="created-h"><h2 id="created-h">Webhook created</h2>
<p><a href="${webhookPath(created.integration.id)}">${created.integration.url}</a></p>${secretBox(created.secret)}</section>`
    : ''
}
<section aria-labelledby="list-h">
<h2 id="list-h">Webhooks</h2>
<p>Each webhook receives <code>visitor.identified</code> events, signed as <a href="https://www.standardwebhooks.com">Standard Webhooks</a>.</p>
${
  integrations.length === 0
    ? emptyState('No webhook yet: identified visitors are delivered to the endpoints you add here.', { href: '#new-h', text: 'Add your first webhook' })
    : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Version</th><th scope="col">State</th><th scope="col">Tiers</th><th scope="col">Success (24 h)</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
}
</section>
<section aria-labelledby="new-h">
<h2 id="new-h">Add a webhook</h2>
<form method="post" action="${WEBHOOKS_PATH}" class="card">
<label for="new-url">Endpoint URL</label>
<input type="url" id="new-url" name="url" required maxlength="2048" value="${form?.url ?? ''}"${form ? html` aria-invalid="true" aria-describedby="new-error"` : ''}>
${form ? html`<p class="field-error" id="new-error">${form.error}</p>` : html`<p class="hint">An https URL of a public host.</p>`}
${describeFields('new', { name: form?.name ?? '', description: form?.description ?? '' })}
${versionSelect('new-version', form?.payloadVersion ?? '2')}
${tierBoxes(account, { contactHandles: form?.contactHandles ?? false, sensitiveTraits: form?.sensitiveTraits ?? false }, 'new')}
<p><button type="submit">Add webhook</button></p>
</form>
</section>
<section aria-labelledby="verify-h">
<h2 id="verify-h">Verifying deliveries (Node)</h2>
<p>Check the signature over the raw body before trusting an event. With the <code>standardwebhooks</code> package:</p>
<pre class="code" tabindex="0"><code>${RECEIVER_SNIPPET}</code></pre>
<p class="hint">Answer 200 to acknowledge. Anything else is retried; 410 disables the webhook.</p>
</section>`
}

function deliveryRow(integrationId: string, d: DeliveryLogEntry, active: boolean): SafeHtml {
  const last = d.attempts.at(-1)
  return html`<tr>
<td>${longId(d.event_id, 'event id')}${d.event_id.startsWith(TEST_EVENT_ID_PREFIX) ? html` <span class="badge">test</span>` : ''}</td>
<td>${d.status}</td>
<td>${d.attempts.length}</td>
<td>${last ? (last.status_code ?? html`<span title="${last.error ?? ''}">${last.error ?? '—'}</span>`) : '—'}</td>
<td>${last ? `${last.latency_ms} ms` : '—'}</td>
<td>${d.status === 'retrying' && d.next_attempt_at ? timeOf(d.next_attempt_at) : '—'}</td>
<td>${active ? html`<form method="post" action="${webhookPath(integrationId)}/deliveries/${encodeURIComponent(d.id)}/replay"><button type="submit" aria-label="Replay delivery of ${d.event_id}">Replay</button></form>` : '—'}</td>
<td><a href="${webhookPath(integrationId)}/deliveries/${encodeURIComponent(d.id)}" aria-label="Debug the delivery of ${d.event_id}">Debug</a></td>
</tr>`
}

/** What a webhook's page shows: its view model. */
export interface WebhookDetailView {
  account: AccountRecord
  integration: IntegrationView
  log: { data: DeliveryLogEntry[]; next_cursor: string | null }
  filter: LogFilter
  /** a secret just revealed or rotated, shown once */
  shown: ShownSecret | null
  /** the settings form as posted, when it was refused */
  form: FormState | null
  /** health at a glance (endpoint-health.ts) */
  health: EndpointHealth | null
  /** the most deliveries a page holds */
  pageSize: number
}

/** The sections of a webhook's page, in order: what is happening first, what changes it after. */
const SECTIONS = [
  ['overview', 'Overview'],
  ['deliveries', 'Deliveries'],
  ['settings', 'Settings'],
  ['danger', 'Danger zone'],
] as const

/**
 * A webhook's page: Overview (health, the chart, the test event), Deliveries (the log, recover),
 * Settings (the form, the signing secret), Danger zone (delete). The row of links at the top
 * moves between them without script.
 */
export function detailBody(v: WebhookDetailView): SafeHtml {
  const { account, integration: i, log, filter, shown, form, health, pageSize } = v
  const base = webhookPath(i.id)
  const query = filterQuery(filter)
  const words = filterWords(filter)
  return html`
<p class="hint">Webhook <code>${i.id}</code>${i.name ? html` · <code>${i.url}</code>` : ''} · <a href="${WEBHOOKS_PATH}">All webhooks</a></p>
<nav class="tabs" aria-label="Sections of this webhook"><ul>${SECTIONS.map(([id, label]) => html`<li><a href="#${id}">${label}</a></li>`)}</ul></nav>
${
  i.active
    ? ''
    : html`<div class="error-summary" role="alert" id="disabled">
<p><strong>This webhook is disabled</strong>${i.disabled_reason ? html`: ${i.disabled_reason === 'endpoint answered 410' ? 'your endpoint answered 410 Gone, which tells us to stop sending' : i.disabled_reason}` : ' (by you)'}. Nothing is delivered while it is disabled.</p>
<form method="post" action="${base}/enable"><button type="submit">Re-enable</button></form>
</div>`
}
<section aria-labelledby="overview-h" id="overview">
<h2 id="overview-h">Overview</h2>
${i.description ? html`<p id="endpoint-description">${i.description}</p>` : ''}
${health ? healthSection(health) : ''}
${health ? outcomeChart('delivery-chart', health.hourly) : ''}
<section aria-labelledby="test-h">
<h3 id="test-h">Test event</h3>
${help(html`Sends a <code>visitor.identified</code> about a made-up person (Ada Example) through the normal signed delivery path.`, html`It is marked as a test: its id starts with <code>${TEST_EVENT_ID_PREFIX}</code> and its <code>classification</code> is <code>test</code>.`)}
<form method="post" action="${base}/test"><button type="submit" class="secondary"${i.active && i.payload_version === 2 ? '' : html` disabled`}>Send test event</button></form>
${i.payload_version === 2 ? '' : html`<p class="hint">Only version 2 webhooks receive events.</p>`}
</section>
</section>
<section aria-labelledby="log-h" id="deliveries">
<h2 id="log-h">Deliveries</h2>
<form method="get" action="${base}#deliveries" class="actions" aria-label="Filter the delivery log">
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
  html`Event id: the exact <code>webhook-id</code> your endpoint received. Debug opens a delivery's attempts and its signed request.`,
  html`Each event is delivered once per webhook. HTTP status is your endpoint's answer to the last attempt; an exact code such as <code>404</code> also works in the address (<code>code=404</code>).`,
  'event-id-hint',
)}
${
  log.data.length === 0
    ? words
      ? html`<p>No deliveries ${words}.</p>`
      : emptyState('No deliveries yet: events appear here as they are sent.', { href: '#test-h', text: 'Send a test event' })
    : html`<div class="table-wrap"><table>
<caption class="hint">Newest first. Response code and duration of the last attempt.</caption>
<thead><tr><th scope="col">Event id</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Duration</th><th scope="col">Next retry</th><th scope="col">Replay</th><th scope="col">Details</th></tr></thead>
<tbody>${log.data.map((d) => deliveryRow(i.id, d, i.active))}</tbody></table></div>`
}
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
</section>
<section aria-labelledby="settings-h" id="settings">
<h2 id="settings-h">Settings</h2>
<section aria-labelledby="edit-h">
<h3 id="edit-h">Endpoint</h3>
<form method="post" action="${base}">
<label for="edit-url">Endpoint URL</label>
<input type="url" id="edit-url" name="url" required maxlength="2048" value="${form?.url ?? i.url}"${form ? html` aria-invalid="true" aria-describedby="edit-error"` : ''}>
${form ? html`<p class="field-error" id="edit-error">${form.error}</p>` : ''}
${describeFields('edit', { name: form?.name ?? i.name ?? '', description: form?.description ?? i.description ?? '' })}
${versionSelect('edit-version', form?.payloadVersion ?? String(i.payload_version))}
${tierBoxes(account, { contactHandles: form?.contactHandles ?? i.tiers.contact_handles, sensitiveTraits: form?.sensitiveTraits ?? i.tiers.sensitive_traits }, 'edit')}
<label class="inline" for="edit-active"><input type="checkbox" id="edit-active" name="active" value="on"${i.active ? html` checked` : ''}> Active</label>
<p><button type="submit">Save</button></p>
</form>
</section>
<section aria-labelledby="secret-h">
<h3 id="secret-h">Signing secret</h3>
${shown ? secretBox(shown) : html`<p>The secret is hidden. Revealing it is recorded in the audit log.</p>`}
<div class="actions">
<form method="post" action="${base}/secret/reveal"><button type="submit" class="secondary">Reveal secret</button></form>
<form method="post" action="${base}/secret/rotate" class="card">
<label for="grace">Keep the old secret signing for</label>
<select id="grace" name="grace_seconds">
<option value="86400">24 hours</option>
<option value="3600">1 hour</option>
<option value="604800">7 days</option>
<option value="0">no time: stop it now</option>
</select>
<p><button type="submit" class="secondary">Rotate secret</button></p>
</form>
</div>
</section>
</section>
<section aria-labelledby="danger-h" id="danger" class="danger-zone">
<h2 id="danger-h">Danger zone</h2>
<section aria-labelledby="delete-h">
<h3 id="delete-h">Delete</h3>
<p>Stops every delivery to this endpoint for good. You confirm on the next page.</p>
<form method="get" action="${base}/delete"><button type="submit" class="danger" id="delete-start">Delete webhook…</button></form>
</section>
</section>`
}

import type { AccountRecord } from '@lsv/shared/model/records.ts'
import type { IntegrationView } from '@lsv/shared/contract/admin.ts'
import { TEST_EVENT_ID_PREFIX } from '@lsv/shared/domain/webhooks/test-event.ts'
import { html, type SafeHtml } from '../kit/page.ts'
import { emptyState } from '../kit/empty-state.ts'
import { outcomeChart } from '../kit/chart.ts'
import { help } from '../kit/ui.ts'
import type { EndpointHealth } from '@lsv/shared/domain/webhooks/endpoint-health.ts'
import { healthCell, healthSection } from './endpoint-health.ts'
import { describeFields, endpointTitle } from './endpoint-fields.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'
import { deliveriesSection, type DeliveryLogView } from './delivery-log-views.ts'
import { secretSection } from './secret-views.ts'

export { WEBHOOKS_PATH, webhookPath } from './paths.ts'

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

/**
 * What this deployment accepts as an endpoint URL, in words: the destination rules of
 * domain/webhooks/ssrf.ts (https or http; a public host; loopback only where
 * ALLOW_LOOPBACK_WEBHOOKS is on, as under `npm start`).
 */
function urlHint(loopbackAllowed: boolean): string {
  return loopbackAllowed
    ? 'An https or http URL of a public host, or of this machine (localhost, 127.0.0.1): this deployment delivers to loopback receivers.'
    : 'An https or http URL of a public host: private, internal and loopback addresses are refused.'
}

/** The endpoint URL input of the add and edit forms: its hint, or the reason the form was refused. */
function urlField(idPrefix: string, value: string, error: string | null, loopbackAllowed: boolean): SafeHtml {
  const id = `${idPrefix}-url`
  return html`<label for="${id}">Endpoint URL</label>
<input type="url" id="${id}" name="url" required maxlength="2048" value="${value}" aria-describedby="${error === null ? `${id}-hint` : `${idPrefix}-error`}"${error === null ? '' : html` aria-invalid="true"`}>
${error === null ? html`<p class="hint" id="${id}-hint">${urlHint(loopbackAllowed)}</p>` : html`<p class="field-error" id="${idPrefix}-error">${error}</p>`}`
}

/** What the list of webhooks shows: its view model. */
export interface WebhookListView {
  account: AccountRecord
  integrations: IntegrationView[]
  /** the add form as posted, when it was refused */
  form: FormState | null
  /** health at a glance per integration id (endpoint-health.ts); absent ones show "—" */
  health: ReadonlyMap<string, EndpointHealth>
  /** whether this deployment delivers to loopback receivers (the URL's hint says so) */
  loopbackAllowed: boolean
}

export function listBody(v: WebhookListView): SafeHtml {
  const { account, integrations, form, health } = v
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
${urlField('new', form?.url ?? '', form?.error ?? null, v.loopbackAllowed)}
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

/** What a webhook's page shows: its view model (the log's part is the Deliveries section's). */
export interface WebhookDetailView extends DeliveryLogView {
  account: AccountRecord
  /** the settings form as posted, when it was refused */
  form: FormState | null
  /** health at a glance (endpoint-health.ts) */
  health: EndpointHealth | null
  /** when the previous signing secret stops signing, while a rotation's grace runs */
  secretGraceEnd: string | null
  /** whether this deployment delivers to loopback receivers (the URL's hint says so) */
  loopbackAllowed: boolean
}

/** The sections of a webhook's page, in order: what is happening first, what changes it after. */
const SECTIONS = [
  ['overview', 'Overview'],
  ['deliveries', 'Deliveries'],
  ['settings', 'Settings'],
  ['danger', 'Danger zone'],
] as const

function disabledNotice(i: IntegrationView): SafeHtml | '' {
  if (i.active) return ''
  return html`<div class="error-summary" role="alert" id="disabled">
<p><strong>This webhook is disabled</strong>${i.disabled_reason ? html`: ${i.disabled_reason === 'endpoint answered 410' ? 'your endpoint answered 410 Gone, which tells us to stop sending' : i.disabled_reason}` : ' (by you)'}. Nothing is delivered while it is disabled.</p>
<form method="post" action="${webhookPath(i.id)}/enable"><button type="submit">Re-enable</button></form>
</div>`
}

function overviewSection(i: IntegrationView, health: EndpointHealth | null): SafeHtml {
  return html`<section aria-labelledby="overview-h" id="overview">
<h2 id="overview-h">Overview</h2>
${i.description ? html`<p id="endpoint-description">${i.description}</p>` : ''}
${health ? healthSection(health) : ''}
${health ? outcomeChart('delivery-chart', health.hourly) : ''}
<section aria-labelledby="test-h">
<h3 id="test-h">Test event</h3>
${help(html`Sends a <code>visitor.identified</code> about a made-up person (Ada Example) through the normal signed delivery path.`, html`It is marked as a test: its id starts with <code>${TEST_EVENT_ID_PREFIX}</code> and its <code>classification</code> is <code>test</code>.`)}
<form method="post" action="${webhookPath(i.id)}/test"><button type="submit" class="secondary"${i.active && i.payload_version === 2 ? '' : html` disabled`}>Send test event</button></form>
${i.payload_version === 2 ? '' : html`<p class="hint">Only version 2 webhooks receive events.</p>`}
</section>
</section>`
}

function settingsSection(v: WebhookDetailView): SafeHtml {
  const { account, integration: i, form } = v
  return html`<section aria-labelledby="settings-h" id="settings">
<h2 id="settings-h">Settings</h2>
<section aria-labelledby="edit-h">
<h3 id="edit-h">Endpoint</h3>
<form method="post" action="${webhookPath(i.id)}">
${urlField('edit', form?.url ?? i.url, form?.error ?? null, v.loopbackAllowed)}
${describeFields('edit', { name: form?.name ?? i.name ?? '', description: form?.description ?? i.description ?? '' })}
${versionSelect('edit-version', form?.payloadVersion ?? String(i.payload_version))}
${tierBoxes(account, { contactHandles: form?.contactHandles ?? i.tiers.contact_handles, sensitiveTraits: form?.sensitiveTraits ?? i.tiers.sensitive_traits }, 'edit')}
<label class="inline" for="edit-active"><input type="checkbox" id="edit-active" name="active" value="on"${i.active ? html` checked` : ''}> Active</label>
<p><button type="submit">Save</button></p>
</form>
</section>
${secretSection({ integrationId: i.id, graceEnd: v.secretGraceEnd })}
</section>`
}

/**
 * A webhook's page: Overview (health, the chart, the test event), Deliveries (the log, recover),
 * Settings (the form, the signing secret), Danger zone (delete). The row of links at the top
 * moves between them without script.
 */
export function detailBody(v: WebhookDetailView): SafeHtml {
  const i = v.integration
  return html`
<p class="hint">Webhook <code>${i.id}</code>${i.name ? html` · <code>${i.url}</code>` : ''} · <a href="${WEBHOOKS_PATH}">All webhooks</a></p>
<nav class="tabs" aria-label="Sections of this webhook"><ul>${SECTIONS.map(([id, label]) => html`<li><a href="#${id}">${label}</a></li>`)}</ul></nav>
${disabledNotice(i)}
${overviewSection(i, v.health)}
${deliveriesSection(v)}
${settingsSection(v)}
<section aria-labelledby="danger-h" id="danger" class="danger-zone">
<h2 id="danger-h">Danger zone</h2>
<section aria-labelledby="delete-h">
<h3 id="delete-h">Delete</h3>
<p>Stops every delivery to this endpoint for good. You confirm on the next page.</p>
<form method="get" action="${webhookPath(i.id)}/delete"><button type="submit" class="danger" id="delete-start">Delete webhook…</button></form>
</section>
</section>`
}

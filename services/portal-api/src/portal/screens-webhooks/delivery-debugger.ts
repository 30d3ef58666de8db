import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { DeliveryAttempt, DeliveryRecord, IntegrationRecord } from '@lsv/shared/model/records.ts'
import { getDeliveryFor } from '@lsv/shared/domain/webhooks/delivery-log.ts'
import { signedRequestOf, verifySnippet, type SignedRequest } from '@lsv/shared/domain/webhooks/signed-request.ts'
import { html, sendPage, type SafeHtml } from '../kit/page.ts'
import { jsonView } from '../kit/json-view.ts'
import { help } from '../kit/ui.ts'
import { sessionOf } from '../session.ts'
import { timeOf } from './delivery-filters.ts'
import { WEBHOOKS_PATH, webhookPath } from './paths.ts'
import { DeliveryParams } from './schemas.ts'
import { statusBadge, testBadge } from './delivery-badges.ts'

const deliveryPath = (integrationId: string, deliveryId: string) => `${webhookPath(integrationId)}/deliveries/${encodeURIComponent(deliveryId)}`

/** The OpenTelemetry trace of the delivery when the record carries one (newer records do). */
function traceIdOf(d: DeliveryRecord): string | null {
  const value = (d as { trace_id?: unknown }).trace_id
  return typeof value === 'string' && value.length > 0 ? value : null
}

function answerOf(a: DeliveryAttempt): SafeHtml {
  if (a.status_code !== null) return html`HTTP <strong>${a.status_code}</strong>`
  return html`no answer: ${a.error ?? 'unknown error'}`
}

function attemptCard(a: DeliveryAttempt, n: number): SafeHtml {
  const headers = a.response_headers ? Object.entries(a.response_headers) : null
  return html`<section class="card" aria-labelledby="attempt-${n}-h">
<h3 id="attempt-${n}-h">Attempt ${a.attempt}${n === 0 ? ' (latest)' : ''}</h3>
<dl class="kv">
<dt>Time</dt><dd>${timeOf(a.at)}</dd>
<dt>Answer</dt><dd>${answerOf(a)}</dd>
<dt>Duration</dt><dd>${a.latency_ms} ms</dd>
</dl>
<h4>Response headers</h4>
${
  headers === null
    ? html`<p class="hint">${a.status_code === null ? 'No answer arrived.' : 'Not kept for attempts recorded before headers were.'}</p>`
    : headers.length === 0
      ? html`<p class="hint">None.</p>`
      : html`<pre class="code" tabindex="0" aria-label="Response headers of attempt ${a.attempt}"><code>${headers.map(([k, v]) => `${k}: ${v}`).join('\n')}</code></pre>`
}
<h4>Response body (first 1 KiB)</h4>
${a.response_excerpt ? jsonView(a.response_excerpt, { label: `Response body of attempt ${a.attempt}`, exact: {} }) : html`<p class="hint">Empty.</p>`}
</section>`
}

function requestSection(base: string, request: SignedRequest | null, last: DeliveryAttempt | undefined): SafeHtml {
  if (!last) return html`<p>Not sent yet: the request appears here after the first attempt.</p>`
  if (!request) return html`<p>The secret that signed this attempt has since been rotated out, so its signature cannot be shown.</p>`
  const headerText = [`content-type: application/json`, ...Object.entries(request.headers).map(([k, v]) => `${k}: ${v}`)].join('\n')
  return html`${last.status_code === null ? html`<p class="hint">This attempt got no answer (${last.error ?? 'unknown error'}); this is what was signed for it.</p>` : ''}
<dl class="kv">
<dt>Method</dt><dd><code>${request.method}</code></dd>
<dt>URL</dt><dd><code>${request.url}</code></dd>
<dt>Body size</dt><dd>${Buffer.byteLength(request.body, 'utf8')} bytes</dd>
</dl>
<h3 id="headers-h">Headers</h3>
<pre class="code" tabindex="0" aria-labelledby="headers-h"><code id="signed-headers">${headerText}</code></pre>
<h3 id="body-h">Body</h3>
<p><button type="button" class="copy" data-copy-target="signed-body" hidden>Copy body</button></p>
${jsonView(request.body, { label: 'Body', exact: { id: 'signed-body' } })}
<h3 id="snippet-h">Verify it yourself (Node)</h3>
${help(
  html`Save as <code>verify.mjs</code> and run <code>WEBHOOK_SECRET=whsec_… node verify.mjs</code> with this webhook's secret (<a href="${base}#secret-h">reveal it</a>).`,
  html`It prints <samp>verified</samp> when the secret signed this request, as your receiver should check it. The secret itself is never shown here.`,
)}
<p><button type="button" class="copy" data-copy-target="verify-snippet" hidden>Copy snippet</button></p>
<pre class="code" tabindex="0" aria-labelledby="snippet-h"><code id="verify-snippet">${verifySnippet(request)}</code></pre>`
}

function deliveryBody(integration: IntegrationRecord, d: DeliveryRecord): SafeHtml {
  const base = webhookPath(integration.id)
  const last = d.attempts.at(-1)
  const request = last ? signedRequestOf(integration, d, last) : null
  const trace = traceIdOf(d)
  return html`<p class="hint"><a href="${base}#deliveries">Back to the delivery log</a></p>
<section aria-labelledby="summary-h">
<h2 id="summary-h">Delivery</h2>
<dl class="kv">
<dt>Event id</dt><dd><code>${d.event_id}</code>${testBadge(d.event_id)}</dd>
<dt>Status</dt><dd>${statusBadge(d.status)}</dd>
<dt>Created</dt><dd>${timeOf(d.created_at)}</dd>
<dt>Attempts</dt><dd>${d.attempts.length}</dd>
${d.status === 'retrying' && d.next_attempt_at ? html`<dt>Next attempt</dt><dd>${timeOf(d.next_attempt_at)}</dd>` : ''}
${trace ? html`<dt>Trace id</dt><dd><code>${trace}</code></dd>` : ''}
</dl>
${integration.active ? html`<form method="post" action="${deliveryPath(integration.id, d.id)}/replay"><button type="submit">Replay this delivery</button></form>` : html`<p class="hint">The webhook is disabled: re-enable it to replay.</p>`}
</section>
<section aria-labelledby="attempts-h">
<h2 id="attempts-h">Attempts</h2>
${d.attempts.length === 0 ? html`<p>No attempt yet.</p>` : [...d.attempts].reverse().map((a, n) => attemptCard(a, n))}
</section>
<section aria-labelledby="request-h">
<h2 id="request-h">Signed request of the latest attempt</h2>
${requestSection(base, request, last)}
</section>`
}

/** The delivery debugger (docs/portal.md, "Delivery debugger"): one delivery of the account's webhook. */
export function registerDeliveryDebugger(scope: App, deps: PlatformDeps): void {
  scope.get(`${WEBHOOKS_PATH}/:integrationId/deliveries/:deliveryId`, { schema: { hide: true, params: DeliveryParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { integration, delivery } = await getDeliveryFor(deps, account.id, request.params.integrationId, request.params.deliveryId)
    return sendPage(reply, {
      status: 200,
      account,
      current: WEBHOOKS_PATH,
      flash: null,
      error: null,
      title: `Delivery ${delivery.event_id}`,
      body: deliveryBody(integration, delivery),
    })
  })
}

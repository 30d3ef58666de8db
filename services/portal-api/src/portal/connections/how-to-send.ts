import type { ConnectionView } from '@lsv/shared/contract/admin.ts'
import type { LocationRecord } from '@lsv/shared/model/records.ts'
import { html, type SafeHtml } from '../kit/html.ts'

/**
 * "How to send" (issue 22, job 7): the exact request a tenant's system makes to push to this
 * connection (contract 2026-09-04, 4.3 to 4.5, and section 5 for the credentials), on the
 * account's own edge host, as curl, Node (fetch) and Python (urllib).
 *
 * The examples carry a placeholder, never a secret: a key or token is shown once, when it is made
 * (reveal.ts), and nowhere after. The snippets are plain text; the page escapes them once, through
 * `html` (portal/kit/html.ts), so what a tenant copies is exactly the text below.
 */

/** The placeholders, one per credential (test/portal/how-to-send.test.ts substitutes real ones). */
const PLACEHOLDERS = { api: 'YOUR_API_KEY', webhook: 'YOUR_SOURCE_TOKEN', partnercrm: 'YOUR_LOCATION_TOKEN' } as const

interface SendRequest {
  url: string
  headers: Array<[string, string]>
  body: Record<string, unknown>
  /** what the credential is and where it came from */
  credential: string
}

/** The request of one connection's kind. `edgeBaseUrl` is the account's edge origin (EDGE_BASE_URL_TEMPLATE). */
function sendRequest(c: ConnectionView, edgeBaseUrl: string, locations: LocationRecord[]): SendRequest {
  const json: [string, string] = ['Content-Type', 'application/json']
  const record = { external_id: 'crm-1001', email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', company: 'Analytical Engines' }
  if (c.type === 'webhook') {
    return {
      url: c.webhook_url ?? `${edgeBaseUrl}/v1/contacts/${encodeURIComponent(c.id)}`,
      headers: [json, ['x-webhook-token', PLACEHOLDERS.webhook]],
      body: { contacts: [record] },
      credential:
        'the source token, shown once when the connection was made or its token rotated (Rotate token above). A sender that cannot set a header may add it to the URL as ?token= instead; a URL ends up in logs, so prefer the header.',
    }
  }
  if (c.type === 'partnercrm') {
    const location = locations.find((l) => l.active)?.location_id ?? 'YOUR_LOCATION_ID'
    return {
      url: `${edgeBaseUrl}/v1/contacts/partnercrm`,
      headers: [json, ['x-webhook-token', PLACEHOLDERS.partnercrm]],
      body: {
        contactId: 'crm-1001',
        locationId: location,
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        companyName: 'Analytical Engines',
      },
      credential:
        "the location's token, shown once in its tokenized URL (?token=…) when the location was added or its token rotated. The platform may call that tokenized URL as it is; a sender of your own sends the token in this header instead.",
    }
  }
  return {
    url: `${edgeBaseUrl}/v1/contacts`,
    headers: [json, ['Authorization', `Bearer ${PLACEHOLDERS.api}`]],
    body: { contacts: [record] },
    credential: 'an API key of this connection with the contacts:write scope (API keys above). Send it from server-side code only, never from a browser.',
  }
}

/** A single-quoted shell word: `'` closes, an escaped quote, and reopens. */
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

function curlExample(r: SendRequest): string {
  const lines = [
    `curl -sS -X POST ${shellQuote(r.url)}`,
    ...r.headers.map(([k, v]) => `  -H ${shellQuote(`${k}: ${v}`)}`),
    `  --data-raw ${shellQuote(JSON.stringify(r.body))}`,
  ]
  return lines.join(' \\\n')
}

function nodeExample(r: SendRequest): string {
  return `// Node 18 or later (save as send.mjs: top-level await)
const response = await fetch(${JSON.stringify(r.url)}, {
  method: 'POST',
  headers: ${JSON.stringify(Object.fromEntries(r.headers))},
  body: JSON.stringify(${JSON.stringify(r.body)}),
})
console.log(response.status, await response.text()) // 202: accepted and queued`
}

function pythonExample(r: SendRequest): string {
  return `# Python 3, standard library only
import json
import urllib.request

request = urllib.request.Request(
    ${JSON.stringify(r.url)},
    data=json.dumps(${JSON.stringify(r.body)}).encode("utf-8"),
    headers=${JSON.stringify(Object.fromEntries(r.headers))},
    method="POST",
)
with urllib.request.urlopen(request) as response:  # raises HTTPError on 4xx/5xx
    print(response.status, response.read().decode())  # 202: accepted and queued`
}

// tabindex: a wide example scrolls inside its box, which the keyboard must reach (axe, scrollable-region-focusable)
function example(id: string, label: string, text: string): SafeHtml {
  return html`<h3 id="${id}-h">${label}</h3>
<div class="actions"><button type="button" class="copy" data-copy-target="${id}" hidden>Copy</button></div>
<pre tabindex="0" aria-labelledby="${id}-h"><code id="${id}">${text}</code></pre>`
}

interface HowToSend {
  connection: ConnectionView
  /** the account's edge origin (EDGE_BASE_URL_TEMPLATE) */
  edgeBaseUrl: string
  /** the connection's locations (a partner CRM example names the first active one) */
  locations: LocationRecord[]
}

export function howToSendSection({ connection: c, edgeBaseUrl, locations }: HowToSend): SafeHtml {
  const r = sendRequest(c, edgeBaseUrl, locations)
  return html`<section aria-labelledby="send-h">
<h2 id="send-h">How to send</h2>
<dl>
<dt>Method and URL</dt><dd><code id="send-url">POST ${r.url}</code></dd>
<dt>Headers</dt><dd><ul>${r.headers.map(([k, v]) => html`<li><code>${k}: ${v}</code></li>`)}</ul></dd>
<dt>Credential</dt><dd><code>${r.headers[1]![1]}</code> stands for ${r.credential}</dd>
<dt>Answer</dt><dd><code>202 {"ok":true,"accepted":1,"queued":true}</code>: the batch is queued durably, then stored. Up to 10,000 records and 8 MiB per request; on 429 or 503 retry after <code>Retry-After</code> seconds.</dd>
</dl>
${example('send-curl', 'curl', curlExample(r))}
${example('send-node', 'Node (fetch)', nodeExample(r))}
${example('send-python', 'Python (urllib)', pythonExample(r))}
</section>`
}

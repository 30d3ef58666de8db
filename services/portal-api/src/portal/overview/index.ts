import type { FastifyReply } from 'fastify'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { html, sendPage, shownName, type SafeHtml } from '../kit/page.ts'
import { CONNECTIONS_PATH, connectionPath } from '../connections/paths.ts'
import { recentPushesPath } from '../connections/recent-pushes.ts'
import { WEBHOOKS_PATH, webhookPath } from '../screens-webhooks/views.ts'
import { DELIVERY_PAGE, ENDPOINTS_READ, readOverview, type Overview } from './read.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'
import { outcomeChart } from '../kit/chart.ts'
import { bannerFor } from '../endpoint-banner.ts'
import { setBanner } from '../kit/banner-slot.ts'
import { help } from '../kit/ui.ts'

/** The landing page after sign-in (routes/portal/access.ts answers GET /portal/ with it). */
const OVERVIEW_PATH = '/portal/'
const SETTINGS_PATH = '/portal/settings'
const ACTIVITY_PATH = '/portal/activity'

interface Step {
  id: string
  done: boolean
  title: string
  /** what doing it gives, in one sentence */
  why: string
  link: { href: string; text: string }
}

/** The setup checklist, in the order a new tenant does it; each step from the account's data. */
function steps(account: AccountRecord, o: Overview): Step[] {
  const api = o.apiConnection
  const firstEndpoint = o.integrations.find((i) => i.active) ?? o.integrations[0]
  return [
    {
      id: 'domain',
      done: account.authorized_domains.length > 0,
      title: 'Authorize your website’s domain',
      why: 'Visitors are identified only on sites under an authorized domain.',
      link: { href: `${SETTINGS_PATH}#dom-h`, text: 'Set authorized domains' },
    },
    {
      id: 'key',
      done: o.liveKeys > 0,
      title: 'Create an API key',
      why: 'Your systems push contacts with it.',
      link: api
        ? { href: `${connectionPath(api.id)}#keys-h`, text: 'Create a key' }
        : { href: `${CONNECTIONS_PATH}#new-h`, text: 'Create an API connection, then a key on it' },
    },
    {
      id: 'push',
      done: o.pushed,
      title: 'Push your first contacts',
      why: 'Contacts you push are what visitors are matched against.',
      link: api
        ? { href: connectionPath(api.id), text: 'See how to push to this connection' }
        : { href: CONNECTIONS_PATH, text: 'Choose a connection to push to' },
    },
    {
      id: 'endpoint',
      done: o.integrations.length > 0,
      title: 'Add a webhook endpoint',
      why: 'Identified visitors are sent to it as signed visitor.identified events.',
      link: { href: `${WEBHOOKS_PATH}#new-h`, text: 'Add a webhook' },
    },
    {
      id: 'delivery',
      done: o.deliveredTo.length > 0,
      title: 'Receive a delivery',
      why: 'A delivery your endpoint answered with 200 (a test event counts) shows it receives and acknowledges events.',
      link: firstEndpoint
        ? { href: `${webhookPath(firstEndpoint.id)}#test-h`, text: 'Send a test event' }
        : { href: `${WEBHOOKS_PATH}#new-h`, text: 'Add a webhook first' },
    },
  ]
}

function checklist(list: Step[]): SafeHtml {
  const left = list.filter((s) => !s.done).length
  return html`<section aria-labelledby="setup-h">
<h2 id="setup-h">Setup</h2>
<p>${left === 0 ? 'Everything is set up.' : `${list.length - left} of ${list.length} done.`}</p>
<ol class="checklist">${list.map(
    (s) => html`<li class="${s.done ? 'done' : 'todo'}" data-step="${s.id}">
<span class="state">${s.done ? 'Done' : 'To do'}</span>
<span><strong>${s.title}</strong><br><span class="hint">${s.why}</span>${s.done ? '' : html`<br><a href="${s.link.href}">${s.link.text}</a>`}</span>
</li>`,
  )}</ol>
</section>`
}

/** "N deliveries waiting for a retry", each endpoint's linking to its log filtered to them */
function waitingLine(waitingBy: Overview['deliveries']['waitingBy']): SafeHtml | '' {
  const total = waitingBy.reduce((n, w) => n + w.count, 0)
  if (total === 0) return ''
  const links = waitingBy.map(
    (w, n) =>
      html`${n > 0 ? ', ' : ''}<a href="${webhookPath(w.integration.id)}?status=retrying#deliveries">${w.integration.name ?? new URL(w.integration.url).host} (${w.count})</a>`,
  )
  return html`<p id="waiting-retry"><strong>${total === 1 ? '1 delivery' : `${total} deliveries`} waiting for a retry</strong>: ${links}.</p>`
}

/**
 * Where the refused pushes are (issue 29, D12): the inbound debugger of each connection that
 * refused some, with how many; the debugger says why for each one.
 */
function refusedLinks(refusedBy: Overview['refusedBy']): SafeHtml | '' {
  if (refusedBy.length === 0) return ''
  if (refusedBy.length === 1)
    return html`<dd class="figure-links" id="refused-pushes"><a href="${recentPushesPath(refusedBy[0]!.connection.id)}">See why in the inbound debugger</a></dd>`
  return html`<dd class="figure-links" id="refused-pushes">Why, in the inbound debugger: ${refusedBy.map(
    (r, n) => html`${n > 0 ? ', ' : ''}<a href="${recentPushesPath(r.connection.id)}">${r.connection.name ?? r.connection.source} (${r.count})</a>`,
  )}</dd>`
}

function health(o: Overview): SafeHtml {
  const d = o.deliveries
  const atLeast = (n: number) => `${d.capped ? 'at least ' : ''}${n}`
  const disabled = o.integrations.filter((i) => !i.active)
  return html`<section aria-labelledby="health-h">
<h2 id="health-h">Health</h2>
<dl class="stats">
<div><dt>Pushes accepted</dt><dd data-figure="pushes-accepted">${o.pushes.accepted}</dd></div>
<div><dt>Pushes refused</dt><dd data-figure="pushes-refused" class="${o.pushes.refused > 0 ? 'bad' : ''}">${o.pushes.refused}</dd>${refusedLinks(o.refusedBy)}</div>
<div><dt>Deliveries succeeded</dt><dd data-figure="deliveries-succeeded">${atLeast(d.succeeded)}</dd></div>
<div><dt>Deliveries failed</dt><dd data-figure="deliveries-failed" class="${d.failed > 0 ? 'bad' : ''}">${atLeast(d.failed)}</dd></div>
<div><dt>Deliveries waiting for a retry</dt><dd data-figure="deliveries-waiting">${atLeast(d.waiting)}</dd></div>
<div><dt>Disabled endpoints</dt><dd data-figure="endpoints-disabled" class="${disabled.length > 0 ? 'bad' : ''}">${disabled.length}</dd></div>
</dl>
${waitingLine(d.waitingBy)}
${outcomeChart('overview-chart', d.hourly)}
${help(
  html`Pushes since ${o.pushes.since.slice(0, 10)} 00:00 UTC (<a href="${ACTIVITY_PATH}">per day and status</a>); deliveries of the last 24 hours.`,
  `Pushes are counted per UTC day. Deliveries are read from the newest ${DELIVERY_PAGE} of each endpoint${o.endpointsUnread > 0 ? `; ${o.endpointsUnread} endpoints beyond the first ${ENDPOINTS_READ} are not counted` : ''}.`,
)}
${
  disabled.length > 0
    ? html`<div class="error-summary" role="status"><p>${disabled.length === 1 ? 'A webhook endpoint is disabled and receives nothing' : `${disabled.length} webhook endpoints are disabled and receive nothing`}:</p>
<ul>${disabled.map((i) => html`<li><a href="${webhookPath(i.id)}">${i.url}</a>${i.disabled_reason ? html` (${i.disabled_reason})` : ''}</li>`)}</ul></div>`
    : ''
}
</section>`
}

/** The overview screen of the signed-in account: setup checklist and health (docs/portal.md, "Overview"). */
export async function sendOverview(deps: PlatformDeps, reply: FastifyReply, account: AccountRecord): Promise<FastifyReply> {
  const o = await readOverview(deps, account)
  // the home is served outside the screens' scope (routes/portal/access.ts), so its banner is set here
  const banner = bannerFor(o.integrations)
  if (banner) setBanner(reply.request, banner)
  const intro = html`<p class="greeting" id="greeting">Welcome back, <strong>${shownName(account)}</strong>.</p>
<p class="hint">Signed in to <strong>${account.name ?? account.public_id}</strong> (account <code>${account.public_id}</code>).</p>`
  return sendPage(reply, { status: 200, account, current: OVERVIEW_PATH, title: 'Overview', body: html`${intro}${checklist(steps(account, o))}${health(o)}` })
}

/**
 * The overview, the landing page: its route is the portal home, which also answers signed-out
 * browsers (routes/portal/access.ts), so it registers nothing here.
 */
export const overviewScreen: ScreenDeclaration = { path: OVERVIEW_PATH, nav: 'Overview' }

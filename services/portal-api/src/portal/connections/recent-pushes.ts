import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { PushCredential, PushLogEntry } from '@lsv/shared/ports/push-log.ts'
import type { Refusal } from '@lsv/shared/ports/push-log.ts'
import type { ConnectionView } from '@lsv/shared/contract/admin.ts'
import type { CustomFieldDefinition } from '@lsv/shared/model/records.ts'
import { getConnection } from '@lsv/shared/domain/tenants/connections.ts'
import { PUSH_LOG_BOUNDS, readRecentPushes } from '@lsv/shared/domain/activity/push-log.ts'
import { readUnrecordedRefusals, REFUSED_RECORDED_PER_MINUTE } from '@lsv/shared/domain/activity/refused-cap.ts'
import { keyReader } from '@lsv/shared/domain/ingest/mapping-coverage.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import { sendPage } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { help, scrollingTable } from '../kit/ui.ts'
import { when } from '../kit/time.ts'
import { emptyState } from '../kit/empty-state.ts'
import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

/** The inbound debugger's path for a connection (linked from its page). */
export const recentPushesPath = (connectionId: string) => `${connectionPath(connectionId)}/pushes`

const ConnectionParams = Type.Object({ connectionId: Type.String() })

/** What each answer means to the sender, in words (docs/errors.md). */
const STATUS_WORDS: Record<number, string> = {
  200: 'stored now',
  202: 'accepted',
  400: 'bad request',
  401: 'not authenticated',
  403: 'forbidden',
  404: 'not found',
  413: 'too large',
  415: 'wrong content type',
  429: 'rate limited',
  503: 'unavailable, retry',
}

function credentialText(c: PushCredential): SafeHtml {
  switch (c.kind) {
    case 'api_key':
      return html`API key ${c.label ?? ''} <code>${c.id ?? ''}</code>`
    case 'source_token':
      return html`source token${c.label ? html` (${c.label})` : ''}`
    case 'location_token':
      return html`location token <code>${c.id ?? ''}</code>`
    default:
      return html`no token${c.id ? html` (location <code>${c.id}</code>)` : ''}`
  }
}

/** One refusal in words: which record (its external_id or position), which value, why. */
function refusalText(r: Refusal): SafeHtml {
  const which = r.external_id !== null ? html`<code>${r.external_id}</code>` : html`record ${String(r.index + 1)}`
  return r.field === null ? html`${which}: ${r.reason}` : html`${which}: ${r.field} <code>${r.value ?? ''}</code> ${r.reason}`
}

/** "accepted N, refused M (why)": the edge's count, or once the worker refused something, what it stored and refused. */
function acceptedText(e: PushLogEntry): SafeHtml | string {
  if (e.accepted === null) return '—'
  const o = e.outcome
  if (!o) return String(e.accepted)
  const more = o.refused_count - o.refused.length
  return html`accepted ${String(o.stored)}, refused ${String(o.refused_count)} (${o.refused.map((r, i) => html`${i ? '; ' : ''}${refusalText(r)}`)}${more > 0 ? html`; ${String(more)} more` : ''})`
}

/** The error as the sender got it; an `invalid payload` names the field it was about (issue 29, D12). */
function errorText(e: PushLogEntry): SafeHtml | string {
  if (e.error === null) return '—'
  if (!e.problem) return e.error
  return html`${e.error}: ${e.problem.path === '' ? 'the body' : html`<code>${e.problem.path}</code>`} ${e.problem.reason}`
}

function row(e: PushLogEntry, reads: (key: string) => boolean): SafeHtml {
  const ok = e.status < 300
  const dropped = e.keys.filter((k) => !reads(k))
  return html`<tr>
<td>${when(e.at)}</td>
<td><span class="badge ${ok ? 'ok' : 'bad'}">${e.status} ${STATUS_WORDS[e.status] ?? ''}</span></td>
<td>${errorText(e)}</td>
<td>${acceptedText(e)}</td>
<td>${dropped.length ? dropped.map((k, i) => html`${i ? ', ' : ''}<code>${k}</code>`) : ok ? 'none' : '—'}</td>
<td>${credentialText(e.credential)}</td>
<td><code>${e.request_id}</code></td>
<td>${e.trace ? html`<code>${e.trace}</code>` : '—'}</td>
</tr>`
}

/** One connection's inbound debugger: its recent pushes, and the definitions its mappings read. */
interface RecentPushesView {
  connection: ConnectionView
  entries: PushLogEntry[]
  definitions: CustomFieldDefinition[]
  /** refused pushes counted but not recorded (the per-minute cap), and since when */
  unrecorded: { count: number; since: string }
}

function recentPushesView({ connection: c, entries, definitions, unrecorded }: RecentPushesView): SafeHtml {
  const reads = keyReader(c.type, c.field_mappings, definitions)
  return html`<p><a href="${connectionPath(c.id)}">Back to the connection</a> · <a href="${CONNECTIONS_PATH}">All connections</a></p>
${help(
  'Newest first, accepted and refused, a few seconds after they are answered.',
  `It keeps ${PUSH_LOG_BOUNDS}. A push appears once its connection is known: a key that was never issued, or a token sent to an unknown source, names no connection and is counted under Activity only. Bodies and secrets are never kept: a key is named by its id, name and first characters. Dropped keys are the keys of the push that the connection's current mappings do not read. What the worker refuses after the answer (a record without external_id, a value that is not an email address) is added to its push as "accepted N, refused M (why)". The request id and trace find the push's lines in the logs.`,
)}
${
  entries.length === 0
    ? emptyState('No pushes in the last 7 days.', { href: connectionPath(c.id), text: 'See how to send one' })
    : scrollingTable(
        'Recent pushes',
        html`<table><caption class="hint">${entries.length} recent ${entries.length === 1 ? 'push' : 'pushes'}${unrecorded.count > 0 ? html`, and ${String(unrecorded.count)} more refused since ${when(unrecorded.since)} (counted, not recorded: at most ${String(REFUSED_RECORDED_PER_MINUTE)} refused pushes a minute are)` : ''}</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Status</th><th scope="col">Error</th><th scope="col">Records accepted</th><th scope="col">Dropped keys</th><th scope="col">Key or token</th><th scope="col">Request id</th><th scope="col">Trace</th></tr></thead>
<tbody>${entries.map((e) => row(e, reads))}</tbody></table>`,
      )
}`
}

/** GET /portal/connections/:id/pushes: the inbound debugger (docs/portal.md, "Inbound debugger"). */
export function registerRecentPushes(scope: App, deps: PlatformDeps): void {
  scope.get(`${CONNECTIONS_PATH}/:connectionId/pushes`, { schema: { hide: true, params: ConnectionParams } }, async (request, reply) => {
    const { account } = sessionOf(request)
    // another account's connection is not found, as on the connection page
    const c = await getConnection(deps, account.id, request.params.connectionId)
    const [entries, definitions, unrecorded] = await Promise.all([
      readRecentPushes(deps, c.id),
      deps.tenants.listCustomFields(account.id),
      readUnrecordedRefusals(deps, c.id),
    ])
    return sendPage(reply, {
      status: 200,
      account,
      current: CONNECTIONS_PATH,
      flash: null,
      title: `Recent pushes: ${c.name ?? `Connection ${c.id}`}`,
      body: recentPushesView({ connection: c, entries, definitions, unrecorded }),
    })
  })
}

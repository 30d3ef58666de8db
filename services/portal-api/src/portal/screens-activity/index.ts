import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { AccountRecord, ConnectionRecord } from '@lsv/shared/model/records.ts'
import { DEAD_LETTER_REASONS, readDeadLetterActivity, readPushActivity, type DeadLetterReason, type PushDay } from '@lsv/shared/domain/activity/counts.ts'
import { PUSH_WINDOWS, pushQuotaKey, type PushQuotaSubject } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { slotOf } from '@lsv/shared/model/rate-limit-window.ts'
import { portalSessionQuota } from '@lsv/shared/domain/portal/push.ts'
import { html, sendPage, type SafeHtml } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { emptyState } from '../kit/empty-state.ts'
import { help } from '../kit/ui.ts'
import { when } from '../kit/time.ts'
import { CONNECTIONS_PATH } from '../connections/paths.ts'
import { recentPushesPath } from '../connections/recent-pushes.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'

const ACTIVITY_PATH = '/portal/activity'

const STATUS_TEXT: Record<string, string> = {
  200: '200 stored at once',
  202: '202 accepted',
  400: '400 invalid',
  401: '401 unauthorized',
  403: '403 forbidden',
  404: '404 not found',
  408: '408 timeout',
  413: '413 too large',
  415: '415 media type',
  429: '429 rate limited',
  431: '431 headers too large',
  503: '503 unavailable',
  other: 'other',
}

interface WindowRow {
  kind: string
  label: string
  counts: Array<{ name: string; used: number; limit: number; resetsAt: string }>
}

/**
 * The current push windows of everything that pushes for the account: each live API key, each
 * webhook source and each active partner CRM location (their token-less calls have windows of
 * their own, shown too), and the portal sessions' one window when they can push (the account has
 * an active api connection: contract 4.6 rule 1). Read with `peek`: looking counts nothing.
 */
async function windowRows(deps: PlatformDeps, account: AccountRecord, connections: readonly ConnectionRecord[]): Promise<WindowRow[]> {
  const nowMs = deps.clock.now()
  const [keys, locations] = await Promise.all([deps.tenants.listApiKeys(account.id), deps.tenants.listLocations(account.id)])
  const subjects: Array<{ kind: string; label: string; subject: PushQuotaSubject }> = []
  for (const k of keys) {
    if (k.revoked_at !== null && Date.parse(k.revoked_at) <= nowMs) continue
    if (k.expires_at !== null && Date.parse(k.expires_at) <= nowMs) continue
    subjects.push({ kind: 'API key', label: `${k.name ?? 'unnamed'} (${k.prefix}…)`, subject: { kind: 'key', keyId: k.id } })
  }
  for (const c of connections) {
    if (c.type === 'webhook' && c.active)
      subjects.push({ kind: 'Source', label: `${c.name ?? c.source} (${c.id})`, subject: { kind: 'source', connectionId: c.id } })
  }
  if (connections.some((c) => c.type === 'api' && c.active)) {
    subjects.push({ kind: 'Portal sessions', label: 'same-origin pushes to /api/contacts', subject: portalSessionQuota(account.id) })
  }
  for (const l of locations) {
    if (!l.active) continue
    subjects.push({ kind: 'Location', label: l.location_id, subject: { kind: 'location', accountId: account.id, locationId: l.location_id } })
    subjects.push({
      kind: 'Location without token',
      label: l.location_id,
      subject: { kind: 'location-tokenless', accountId: account.id, locationId: l.location_id },
    })
  }
  return Promise.all(
    subjects.map(async (s) => {
      const used = await deps.rateLimiter.peek(pushQuotaKey(s.subject), PUSH_WINDOWS, nowMs)
      return {
        kind: s.kind,
        label: s.label,
        counts: PUSH_WINDOWS.map((w, i) => ({
          name: w.seconds === 60 ? '60 s' : '24 h',
          used: used[i]!,
          limit: w.limit,
          resetsAt: new Date(slotOf(w, nowMs).endMs).toISOString(),
        })),
      }
    }),
  )
}

function pushTable(days: PushDay[], statuses: string[]): SafeHtml {
  const withAny = days.filter((d) => d.total > 0)
  if (withAny.length === 0) return emptyState('No pushes in the last 7 days.', { href: CONNECTIONS_PATH, text: 'See how to push to a connection' })
  return html`<div class="table-wrap"><table>
<caption class="hint">Per UTC day, by the answer given: on the edge, and on the portal's fallbacks (<code>/api/contacts</code>). Counted within a few seconds of each answer.</caption>
<thead><tr><th scope="col">Day</th>${statuses.map((s) => html`<th scope="col">${STATUS_TEXT[s] ?? s}</th>`)}<th scope="col">Total</th></tr></thead>
<tbody>${withAny.map((d) => html`<tr><th scope="row">${d.day}</th>${statuses.map((s) => html`<td>${d.counts[s] ?? 0}</td>`)}<td>${d.total}</td></tr>`)}</tbody>
</table></div>`
}

/**
 * Each push, accepted or refused, and why (issue 29, D12): the counts above say how many, a
 * connection's inbound debugger says which and why.
 */
function debuggerLinks(connections: readonly ConnectionRecord[]): SafeHtml | '' {
  if (connections.length === 0) return ''
  return html`<p id="inbound-debuggers">Which pushes were refused, and why, in the inbound debugger of ${connections.map(
    (c, i) => html`${i === 0 ? '' : i === connections.length - 1 ? ' or ' : ', '}<a href="${recentPushesPath(c.id)}">${c.name ?? c.source}</a>`,
  )}.</p>`
}

function deadTable(rows: Array<{ day: string; reason: DeadLetterReason; records: number }>): SafeHtml {
  if (rows.length === 0) return html`<p>No records were dead-lettered in the last 7 days.</p>`
  return html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Day</th><th scope="col">Records</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows.map((r) => html`<tr><th scope="row">${r.day}</th><td>${r.records}</td><td><code>${r.reason}</code>: ${DEAD_LETTER_REASONS[r.reason]}</td></tr>`)}</tbody>
</table></div>`
}

function windowTable(rows: WindowRow[]): SafeHtml {
  if (rows.length === 0)
    return emptyState('Nothing pushes for this account yet: each API key, webhook source and location gets its windows here.', {
      href: CONNECTIONS_PATH,
      text: 'Create a connection',
    })
  return html`<div class="table-wrap"><table>
<caption class="hint">Each key, source and location has its own windows, and the portal sessions share one: 120 per 60 s and 50,000 per 24 h (fixed windows, UTC-aligned).</caption>
<thead><tr><th scope="col">Pushes through</th><th scope="col">60 s window</th><th scope="col">24 h window</th></tr></thead>
<tbody>${rows.map((r) => html`<tr><th scope="row">${r.kind}: ${r.label}</th>${r.counts.map((c) => html`<td>${c.used} of ${c.limit}${c.used >= c.limit ? html` <strong>(full)</strong>` : ''}<br><span class="hint">resets ${when(c.resetsAt)}</span></td>`)}</tr>`)}</tbody>
</table></div>`
}

/** Activity (docs/portal.md, "Activity"): pushes per day by outcome, dead letters, current windows. */
function registerActivityScreens(scope: App, deps: PlatformDeps): void {
  scope.get(ACTIVITY_PATH, { schema: { hide: true } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const connections = await deps.tenants.listConnections(account.id)
    const [pushes, dead, windows] = await Promise.all([
      readPushActivity(deps, account.id),
      readDeadLetterActivity(deps, account.id),
      windowRows(deps, account, connections),
    ])
    return sendPage(reply, {
      status: 200,
      account,
      current: ACTIVITY_PATH,
      title: 'Activity',
      body: html`
<section aria-labelledby="pushes-h"><h2 id="pushes-h">Pushes per day</h2>${pushTable(pushes.days, pushes.statuses)}${debuggerLinks(connections)}</section>
<section aria-labelledby="dead-h"><h2 id="dead-h">Dead-lettered records</h2>
${help('Records accepted by the edge that could not be stored.', 'They are kept on the dead-letter topic; your operator can inspect and replay them.')}
${deadTable(dead)}</section>
<section aria-labelledby="windows-h"><h2 id="windows-h">Rate-limit windows now</h2>${windowTable(windows)}</section>`,
    })
  })
}

/** Activity: what came in and went out, by day. */
export const activityScreen: ScreenDeclaration = { path: ACTIVITY_PATH, nav: 'Activity', register: registerActivityScreens }

import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import type { AuditEntry } from '@lsv/shared/ports/audit-log.ts'
import { html, type SafeHtml } from '../kit/html.ts'
import { sendPage } from '../kit/page.ts'
import { sessionOf } from '../session.ts'
import { scrollingTable } from '../kit/ui.ts'
import { when } from '../kit/time.ts'
import { BAD_PAGE_LINK, PageLinkValue, pageNumberOf, pager } from '../kit/pager.ts'
import type { ScreenDeclaration } from '../kit/screens.ts'

const AUDIT_PATH = '/portal/audit'
const PAGE_SIZE = 50
/** an entry id (domain/audit/record.ts): what `before` and `after` carry */
const ENTRY_ID = /^\d{13}-[0-9a-f]{16}$/
const AuditQuery = Type.Object({ before: PageLinkValue, after: PageLinkValue, page: PageLinkValue })

/** an ISO 8601 instant (a detail such as `previous_until`): shown in the portal's one time format */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/

function valueHtml(v: unknown): SafeHtml | string {
  if (typeof v === 'string' && INSTANT.test(v) && !Number.isNaN(Date.parse(v))) return when(v)
  return Array.isArray(v) ? v.join(', ') : String(v)
}

function describe(values: Record<string, unknown>): SafeHtml {
  return html`${Object.entries(values).map(([k, v], i) => html`${i > 0 ? '; ' : ''}${k}: ${valueHtml(v)}`)}`
}

function row(e: AuditEntry) {
  return html`<tr><td>${when(e.at)}</td><td>${e.actor}</td><td><code class="action">${e.action}</code></td>
<td>${describe(e.target)}</td><td>${describe(e.details)}</td></tr>`
}

/** The audit log (docs/portal.md): what was changed in the portal, newest first, keyset pages. */
function registerAuditScreen(scope: App, deps: PlatformDeps): void {
  scope.get(AUDIT_PATH, { schema: { hide: true, querystring: AuditQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { before, after } = request.query
    const pageNo = pageNumberOf(request.query.page)
    if (pageNo === null || [before, after].some((id) => id !== undefined && !ENTRY_ID.test(id))) {
      return sendPage(reply, {
        status: 400,
        account,
        current: AUDIT_PATH,
        error: BAD_PAGE_LINK,
        title: 'Audit log',
        body: html`<p><a href="${AUDIT_PATH}">Newest entries</a></p>`,
      })
    }
    // newer (after) or older (before) than an entry of the page the tenant came from; never both
    const page = await listAudit(deps, account.id, {
      ...(before !== undefined ? { before } : after !== undefined ? { after } : {}),
      limit: PAGE_SIZE,
    })
    const first = before === undefined && after === undefined
    return sendPage(reply, {
      status: 200,
      account,
      current: AUDIT_PATH,
      title: 'Audit log',
      body: html`
<p class="hint">Every change made in the portal: who (the portal session), what, when. Secrets are never written here.</p>
${
  page.data.length
    ? scrollingTable(
        'Audit log entries',
        html`<table><thead><tr><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
<tbody>${page.data.map(row)}</tbody></table>`,
      )
    : html`<p>${first ? 'Nothing changed in the portal yet.' : 'No entries on this page.'}</p>`
}
${pager({
  label: 'Audit log pages',
  path: AUDIT_PATH,
  page: pageNo,
  rows: page.data.length,
  size: PAGE_SIZE,
  noun: 'entries',
  prev: page.newer_after ? `after=${page.newer_after}` : null,
  next: page.next_before ? `before=${page.next_before}` : null,
  firstText: 'Newest',
  prevText: 'Newer',
  nextText: 'Older',
  away: !first,
})}`,
    })
  })
}

/** The audit log: every change made through the portal or the management API. */
export const auditScreen: ScreenDeclaration = { path: AUDIT_PATH, nav: 'Audit log', register: registerAuditScreen }

import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'
import type { AuditEntry } from '@lsv/shared/ports/audit-log.ts'
import { html } from '../../routes/portal/html.ts'
import { sendScreen } from '../layout.ts'
import { sessionOf } from '../session.ts'
import { scrollingTable, when } from '../ui.ts'

const AUDIT_PATH = '/portal/audit'
const PAGE_SIZE = 50
const AuditQuery = Type.Object({ before: Type.Optional(Type.String({ pattern: '^\\d{13}-[0-9a-f]{16}$' })) })

function describe(values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('; ')
}

function row(e: AuditEntry) {
  return html`<tr><td><time datetime="${e.at}">${when(e.at)}</time></td><td>${e.actor}</td><td><code class="action">${e.action}</code></td>
<td>${describe(e.target)}</td><td>${describe(e.details)}</td></tr>`
}

/** The audit log (docs/portal.md): what was changed in the portal, newest first, keyset pages. */
export function registerAuditScreen(scope: App, deps: PlatformDeps): void {
  scope.get(AUDIT_PATH, { schema: { hide: true, querystring: AuditQuery } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const { before } = request.query
    const page = await listAudit(deps, account.id, before === undefined ? { limit: PAGE_SIZE } : { before, limit: PAGE_SIZE })
    return sendScreen(
      reply,
      200,
      { account, current: AUDIT_PATH },
      'Audit log',
      html`
<p class="hint">Every change made in the portal: who (the portal session), what, when. Secrets are never written here.</p>
${
  page.data.length
    ? scrollingTable(
        'Audit log entries',
        html`<table><thead><tr><th scope="col">When (UTC)</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">Details</th></tr></thead>
<tbody>${page.data.map(row)}</tbody></table>`,
      )
    : html`<p>${before === undefined ? 'Nothing changed in the portal yet.' : 'No older entries.'}</p>`
}
<nav class="pager" aria-label="Audit log pages">
${before !== undefined ? html`<a href="${AUDIT_PATH}">Newest</a>` : ''}
${page.next_before ? html`<a href="${AUDIT_PATH}?before=${page.next_before}">Older</a>` : ''}
</nav>`,
    )
  })
}

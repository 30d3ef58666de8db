import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { CreateConnectionBody } from '@lsv/shared/contract/admin.ts'
import { createConnection } from '@lsv/shared/domain/tenants/connections.ts'
import type { ConnectionRecord } from '@lsv/shared/model/records.ts'
import { checkForm, fieldErrorsOf, fieldValue } from '../kit/forms.ts'
import { redirectTo } from '../kit/page.ts'
import { FormBody } from '../kit/ui.ts'
import { auditOf } from '../kit/audited.ts'
import { sessionOf } from '../session.ts'
import { redirectToReveal } from '../reveal.ts'
import { ConnectionParams, FlashQuery, MappingRowsQuery, queryRows } from './form-values.ts'
import type { ConnectionPages } from './pages.ts'
import { CONNECTIONS_PATH, connectionPath } from './paths.ts'

/** The list of connections, a new connection (its webhook source token shown once), and a connection's page. */
export function registerConnectionRoutes(scope: App, deps: PlatformDeps, pages: ConnectionPages): void {
  scope.get(CONNECTIONS_PATH, { schema: { hide: true, querystring: FlashQuery } }, async (request, reply) => pages.list(request, reply))

  scope.post(CONNECTIONS_PATH, { schema: { hide: true, body: FormBody } }, async (request, reply) => {
    const { account } = sessionOf(request)
    const values = { type: fieldValue(request.body, 'type'), name: fieldValue(request.body, 'name').trim(), source: fieldValue(request.body, 'source').trim() }
    const body = { type: values.type, ...(values.name ? { name: values.name } : {}), ...(values.source ? { source: values.source } : {}) }
    const checked = checkForm(CreateConnectionBody, body)
    if (!checked.ok) return pages.list(request, reply, { status: 400, errors: checked.errors, values })
    let created
    try {
      const withEntry = auditOf(deps, request).change((c: ConnectionRecord) => ({
        action: 'connection.create',
        target: { connection_id: c.id },
        details: { type: c.type, source: c.source },
      }))
      created = await createConnection(withEntry, account.id, checked.value)
    } catch (err) {
      return pages.list(request, reply, { status: 400, errors: fieldErrorsOf(err), values })
    }
    if (created.token) {
      // a webhook source's token: shown once
      return redirectToReveal(deps, request, reply, {
        title: 'Connection created',
        label: 'Source token',
        secret: created.token,
        note: 'copy it now: it is not shown again.',
        back: { path: connectionPath(created.id), text: 'Go to the connection' },
      })
    }
    return redirectTo(reply, connectionPath(created.id), 'connection-created')
  })

  scope.get(
    `${CONNECTIONS_PATH}/:connectionId`,
    { schema: { hide: true, params: ConnectionParams, querystring: MappingRowsQuery } },
    async (request, reply) => {
      // reopened from the mapping review: the editor shows the proposed rows and the pasted sample again (nothing stored)
      const { sample, sample_not_kept } = request.query
      const rows = queryRows(request.query)
      return pages.detail(request, reply, {
        connectionId: request.params.connectionId,
        state: { ...(rows ? { rows } : {}), ...(sample !== undefined ? { sample } : {}), ...(sample_not_kept ? { sampleNotKept: true } : {}) },
      })
    },
  )
}

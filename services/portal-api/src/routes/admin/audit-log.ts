import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AccountParams } from '@lsv/shared/contract/admin.ts'
import { AUDIT_PAGE_DEFAULT, AuditLogPage, AuditLogQuery } from '@lsv/shared/contract/audit-log.ts'
import { requireAccount } from '@lsv/shared/domain/tenants/common.ts'
import { listAudit } from '@lsv/shared/domain/audit/record.ts'

/** What the portal changed in an account (docs/portal.md, "Audit log"), for the operator. */
export function registerAuditLogAdminRoutes(app: App, deps: PlatformDeps): void {
  app.get(
    '/api/v1/admin/accounts/:accountId/audit-log',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'listAuditLog',
        tags: ['management'],
        summary: 'List the changes made in the portal, newest first (never a secret)',
        security: SECURITY.operator,
        params: AccountParams,
        querystring: AuditLogQuery,
        response: { 200: AuditLogPage, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      const { before, limit } = request.query
      await requireAccount(deps, accountId)
      const page = await listAudit(deps, accountId, { ...(before === undefined ? {} : { before }), limit: limit ?? AUDIT_PAGE_DEFAULT })
      return { data: page.data.map(({ account_id: _a, ...e }) => e), next_before: page.next_before }
    },
  )
}

import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AccountParams, AuthorizedDomains, AuthorizedDomainsBody } from '@lsv/shared/contract/admin.ts'
import { getAuthorizedDomains, setAuthorizedDomains } from '@lsv/shared/domain/tenants/domains.ts'

/** The account's authorized link destinations (contract 4.2). */
export function registerDomainRoutes(app: App, deps: PlatformDeps): void {
  const path = '/api/v1/admin/accounts/:accountId/authorized-domains'

  app.put(
    path,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'setAuthorizedDomains',
        tags: ['management'],
        summary: 'Replace the authorized domains (each authorizes itself and its subdomains)',
        security: SECURITY.operator,
        params: AccountParams,
        body: AuthorizedDomainsBody,
        response: { 200: AuthorizedDomains, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return setAuthorizedDomains(deps, accountId, request.body.domains)
    },
  )

  app.get(
    path,
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'getAuthorizedDomains',
        tags: ['management'],
        summary: 'Read the authorized domains',
        security: SECURITY.operator,
        params: AccountParams,
        response: { 200: AuthorizedDomains, ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request) => {
      const { accountId } = request.params
      return getAuthorizedDomains(deps, accountId)
    },
  )
}

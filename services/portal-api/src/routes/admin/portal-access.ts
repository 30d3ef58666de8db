import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { NoContent } from '@lsv/shared/contract/common.ts'
import { AccountParams } from '@lsv/shared/contract/admin.ts'
import { PortalLink, PortalLinkBody } from '@lsv/shared/contract/portal-access.ts'
import { mintPortalLink } from '@lsv/shared/domain/portal/links.ts'
import { endAccountPortalSessions } from '@lsv/shared/domain/portal/sessions.ts'
import { requireAccount } from '@lsv/shared/domain/tenants/common.ts'

/**
 * Portal access of an account (management-api.md, "Portal access"; docs/portal.md): sign-in links
 * and ending sessions. The operator check (and "an empty body is no body") is attached to every
 * route under /api/v1/admin/ by `./index.ts`; these must be registered after it.
 */
export function registerPortalAccessAdminRoutes(app: App, deps: PlatformDeps): void {
  app.post(
    '/api/v1/admin/accounts/:accountId/portal-links',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'createPortalLink',
        tags: ['management'],
        summary: 'Mint a single-use portal sign-in link for an account',
        description:
          'Following the link (GET) the first time, before `expires_at`, starts a portal session of the account (cookie) and redirects (303) to the portal. 409 when the account is inactive.',
        security: SECURITY.operator,
        params: AccountParams,
        body: PortalLinkBody,
        response: { 201: PortalLink, ...errorResponsesWithIssues(400, 401, 404, 409) },
      },
    },
    async (request, reply) => {
      const link = await mintPortalLink(deps, request.params.accountId, request.body.ttl_seconds)
      return reply.code(201).send(link)
    },
  )

  app.delete(
    '/api/v1/admin/accounts/:accountId/portal-sessions',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'endPortalSessions',
        tags: ['management'],
        summary: 'End every portal session of an account',
        description: 'Every session of the account ends at once; sign-in links minted before and not yet followed stop working too.',
        security: SECURITY.operator,
        params: AccountParams,
        response: { 204: NoContent('every session ended'), ...errorResponsesWithIssues(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await requireAccount(deps, request.params.accountId)
      await endAccountPortalSessions(deps, request.params.accountId)
      return reply.code(204).send()
    },
  )
}

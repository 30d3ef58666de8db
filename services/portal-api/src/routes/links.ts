import type { FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { MintLinkBody, MintLinkResponse } from '@lsv/shared/contract/links.ts'
import { errorResponsesWithIssues } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AppError, isAppError } from '@lsv/shared/errors/app-error.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { portalSessionOf } from '@lsv/shared/domain/portal/credential.ts'
import { consumeLinkMintQuota } from '@lsv/shared/domain/links/rate-limit.ts'
import { mintContactLink } from '@lsv/shared/domain/links/mint.ts'

/** The account each authenticated request acts for (set in onRequest, read by the handler). */
const callerAccount = new WeakMap<FastifyRequest, AccountRecord>()

/**
 * POST /api/contacts/links (contract 4.2, docs/links.md).
 *
 * Order of checks: key (401/403) and rate limit (429) run in `onRequest`, before the body is
 * even read, so an unauthenticated caller learns nothing about the body and never counts toward
 * a customer's window; then JSON (400 `invalid JSON body`), schema (400 `invalid payload` with
 * `issues`), destination (400), contact (404), signing keys (503), token write (500 `mint failed`).
 */
export function registerLinkRoutes(app: App, deps: PlatformDeps): void {
  app.post(
    '/api/contacts/links',
    {
      config: { validationIssues: true },
      schema: {
        operationId: 'mintContactLink',
        tags: ['links'],
        summary: 'Mint a token and a tagged link for one contact',
        description: 'Requires scope `contacts:links:write` (not granted by default). Rate limit: 120 per minute per customer (fixed window).',
        security: SECURITY.apiKey,
        body: MintLinkBody,
        response: { 200: MintLinkResponse, ...errorResponsesWithIssues(400, 401, 403, 404, 429, 500, 503) },
      },
      onRequest: async (request) => {
        try {
          // a same-origin portal session in place of a key (docs/portal.md); a present key decides
          const account =
            (await portalSessionOf(deps, request))?.account ?? (await authenticateApiKey(deps, request.headers, { scope: 'contacts:links:write' })).account
          await consumeLinkMintQuota(deps, account.id)
          callerAccount.set(request, account)
        } catch (err) {
          throw isAppError(err) ? err : new AppError('mint_failed', { cause: err })
        }
      },
    },
    async (request) => {
      const account = callerAccount.get(request)
      if (!account) throw new AppError('unauthorized')
      return mintContactLink(deps, account, request.body)
    },
  )
}

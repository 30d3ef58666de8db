import { Type } from 'typebox'
import type { FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { Contact } from '@lsv/shared/contract/contact.ts'
import { ContactList } from '@lsv/shared/contract/contact-list.ts'
import { ContactIdParams, IncludeParam, IncludeQuery } from '@lsv/shared/contract/read.ts'
import { AppError, isAppError } from '@lsv/shared/errors/app-error.ts'
import { authenticateApiKey, type ApiKeyAuth } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { consumeReadQuota } from '@lsv/shared/domain/contacts/read-quota.ts'
import { readContact, readContactList } from '@lsv/shared/domain/contacts/read.ts'
import { parseInclude } from '@lsv/shared/domain/contacts/include.ts'

/** The key each authenticated read acts for (set in onRequest, read by the handler). */
const readers = new WeakMap<FastifyRequest, ApiKeyAuth>()

/**
 * The read contract (contract 4.7, docs/read-api.md): one contact and a keyset-paged list,
 * key-authenticated with scope `contacts:read`. The Contact is the same object the webhook
 * carries, assembled for this caller: a gated tier is released when requested with `include`
 * and permitted to the account; otherwise its keys are in `missing` as `withheld_tier`.
 *
 * Order of checks: key (401/403) and rate limit (429, read-quota.ts) in `onRequest`, before the
 * parameters are validated: a caller without a valid key learns nothing about the parameters
 * (anonymous `?limit=1000` is 401, not 400). Then parameters (400): `include` first, then the
 * schema; then the read (404).
 */
export function registerContactReadRoutes(app: App, deps: PlatformDeps): void {
  const authenticated = async (request: FastifyRequest): Promise<void> => {
    try {
      const auth = await authenticateApiKey(deps, request.headers, { scope: 'contacts:read' })
      await consumeReadQuota(deps, auth.key.id)
      readers.set(request, auth)
    } catch (err) {
      // a tenant store or rate limiter failure is retryable, never a 500
      throw isAppError(err) ? err : new AppError('temporarily_unavailable', { cause: err })
    }
  }
  // `include` before the schema: a repeated parameter arrives as an array, which the schema's
  // string type would refuse as `invalid payload`; the contract answers anything but the allowed
  // tiers with `invalid include` (contract 7.7, domain/contacts/include.ts)
  const includeFirst = async (request: FastifyRequest): Promise<void> => {
    parseInclude((request.query as { include?: unknown }).include)
  }
  const readerOf = (request: FastifyRequest): ApiKeyAuth => {
    const auth = readers.get(request)
    if (!auth) throw new AppError('unauthorized')
    return auth
  }

  app.get(
    '/api/v1/contacts/:id',
    {
      onRequest: authenticated,
      preValidation: includeFirst,
      schema: {
        operationId: 'getContact',
        tags: ['read contract'],
        summary: 'Read one contact',
        security: SECURITY.apiKey,
        params: ContactIdParams,
        querystring: IncludeQuery,
        response: { 200: Contact, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const auth = readerOf(request)
      const { id } = request.params
      const { include } = request.query
      return readContact(deps, auth.account.id, id, include)
    },
  )

  app.get(
    '/api/v1/contacts',
    {
      onRequest: authenticated,
      preValidation: includeFirst,
      schema: {
        operationId: 'listContacts',
        tags: ['read contract'],
        summary: 'List contacts (keyset pages)',
        security: SECURITY.apiKey,
        querystring: Type.Object({
          include: Type.Optional(IncludeParam),
          cursor: Type.Optional(Type.String({ maxLength: 400, description: 'opaque `next_cursor` of the previous page' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
        }),
        response: { 200: ContactList, ...errorResponses(400, 401, 403, 429, 503) },
      },
    },
    async (request) => {
      const auth = readerOf(request)
      const q = request.query
      return readContactList(deps, auth.account.id, { include: q.include, cursor: q.cursor, limit: q.limit ?? 25 })
    },
  )
}

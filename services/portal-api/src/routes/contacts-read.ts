import { Type } from 'typebox'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/platform/deps.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { Contact } from '@lsv/shared/contract/contact.ts'
import { ContactList } from '@lsv/shared/contract/contact-list.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/api-keys.ts'
import { readContact, readContactList } from '@lsv/shared/domain/contacts/read.ts'

const IncludeQuery = Type.String({
  maxLength: 200,
  description: 'comma list of gated tiers: `contact_handles`, `sensitive_traits`; anything else (custom_fields included) answers 400',
})
const Security = [{ bearerKey: [] }, { apiKeyHeader: [] }]

/**
 * The read contract (contract 4.7, docs/read-api.md): one contact and a keyset-paged list,
 * key-authenticated with scope `contacts:read`. The Contact is the same object the webhook
 * carries, assembled for this caller: a gated tier is released when requested with `include`
 * and permitted to the account; otherwise its keys are in `missing` as `withheld_tier`.
 */
export function registerContactReadRoutes(app: App, deps: PlatformDeps): void {
  app.get('/api/v1/contacts/:id', {
    schema: {
      operationId: 'getContact',
      tags: ['read contract'],
      summary: 'Read one contact',
      security: Security,
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }),
      querystring: Type.Object({ include: Type.Optional(IncludeQuery) }),
      response: { 200: Contact, ...errorResponses(400, 401, 403, 404, 429, 503) },
    } as never,
  }, async (request) => {
    const auth = await authenticateApiKey(deps, request.headers, { scope: 'contacts:read' })
    const { id } = request.params as { id: string }
    const { include } = request.query as { include?: string }
    return readContact(deps, auth.account.id, id, include)
  })

  app.get('/api/v1/contacts', {
    schema: {
      operationId: 'listContacts',
      tags: ['read contract'],
      summary: 'List contacts (keyset pages)',
      security: Security,
      querystring: Type.Object({
        include: Type.Optional(IncludeQuery),
        cursor: Type.Optional(Type.String({ maxLength: 400, description: 'opaque `next_cursor` of the previous page' })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
      }),
      response: { 200: ContactList, ...errorResponses(400, 401, 403, 429, 503) },
    } as never,
  }, async (request) => {
    const auth = await authenticateApiKey(deps, request.headers, { scope: 'contacts:read' })
    const q = request.query as { include?: string; cursor?: string; limit?: number }
    return readContactList(deps, auth.account.id, { include: q.include, cursor: q.cursor, limit: q.limit ?? 25 })
  })
}

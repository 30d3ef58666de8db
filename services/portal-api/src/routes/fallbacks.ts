import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { withRequestLog } from '@lsv/shared/http/request-deps.ts'
import { documentationOnly, retryable, SourceIdParams, TokenQuery, WildcardParams } from '@lsv/shared/http/push-route-kit.ts'
import type { ConnectionRecord } from '@lsv/shared/model/records.ts'
import { FallbackPushBody, PushAccepted, PushUpsertedSync } from '@lsv/shared/contract/push.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { portalSessionOf } from '@lsv/shared/domain/portal/credential.ts'
import { portalPushCaller } from '@lsv/shared/domain/portal/push.ts'
import { authenticateSource } from '@lsv/shared/domain/ingest/auth.ts'
import { consumePushQuota } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { acceptPushOrUpsert } from '@lsv/shared/domain/ingest/accept.ts'
import { fallbackShapeOf } from '@lsv/shared/domain/ingest/push-body.ts'
import { tellListenersNow } from '@lsv/shared/domain/outcomes/tell.ts'

/**
 * `Deprecation` (RFC 9745): the instant the fallbacks were deprecated, the contract's date
 * 2026-09-04T00:00:00Z, as a structured-field date. (No `Link` to the successor: it lives on the
 * tenant's own edge host, which an unauthenticated answer must not name.)
 */
export const DEPRECATION_HEADER = '@1788480000'

const connections = new WeakMap<FastifyRequest, ConnectionRecord>()
const FALLBACK_NOTE =
  'Deprecated origin fallback (contract 4.6): every answer carries a `Deprecation` header. Also accepts the nested `{events:[{resolution:{…}}]}` shape (each `resolution` is one record). ' +
  'When the durable queue is unavailable the batch is upserted synchronously and the answer is 200 `{ok, accepted, queued: false, upserted, failed}` instead of 202; 503 only when that fails too.'

function deprecate(reply: FastifyReply): void {
  reply.header('deprecation', DEPRECATION_HEADER)
}

/**
 * POST /api/contacts and POST /api/contacts/webhook/{sourceId} (contract 4.6; docs/ingestion.md):
 * the same authentication, checks and answers as the edge operations, minus the subdomain (the
 * portal origin has none: the key or the source names the tenant). The push fallback counts in
 * the same per-key window as `POST /v1/contacts`; the webhook fallback has no rate limit.
 *
 * Their answers count in the portal's Activity screen like the edge's (domain/activity/): every
 * answer to a request whose account is known, which here is once the session, key or source
 * token named it (an unknown credential names no account, so its 401 is not counted).
 */
export function registerFallbackRoutes(app: App, deps: PlatformDeps): void {
  const accountOf = new WeakMap<FastifyRequest, string>()
  // told to the push listeners (platform/listeners.ts) as an answer of its account only: the
  // activity counts take it; the inbound debugger and the samples are the edge's
  const countAnswer = async (request: FastifyRequest, reply: FastifyReply) => {
    const accountId = accountOf.get(request)
    if (accountId === undefined) return
    const answered = { requestId: request.id, headers: request.headers, status: reply.statusCode, accountId, connection: null, error: null, accepted: null }
    tellListenersNow(deps.listeners.push, deps, (l) => l.onPushAnswered(answered, deps))
  }
  app.addHook('onClose', async () => deps.listeners.flush())

  app.post(
    '/api/contacts',
    {
      validatorCompiler: documentationOnly,
      schema: {
        operationId: 'pushContactsFallback',
        tags: ['contacts'],
        summary: 'Deprecated origin fallback of POST /v1/contacts',
        description: `${FALLBACK_NOTE} Requires scope \`contacts:write\`. Rate limit shared with POST /v1/contacts (per API key).`,
        deprecated: true,
        security: SECURITY.apiKey,
        body: FallbackPushBody,
        response: { 200: PushUpsertedSync, 202: PushAccepted, ...errorResponses(400, 401, 403, 413, 429, 503) },
      },
      onResponse: countAnswer,
      onRequest: async (request, reply) => {
        deprecate(reply)
        try {
          // contract 4.6 rule 1: a same-origin portal session in place of a key; a present key decides
          const session = await portalSessionOf(deps, request)
          if (session) accountOf.set(request, session.account.id)
          const auth = session
            ? await portalPushCaller(deps, session)
            : await authenticateApiKey(deps, request.headers, { scope: 'contacts:write' }).then((a) => ({
                connection: a.connection,
                quota: { kind: 'key', keyId: a.key.id } as const,
              }))
          accountOf.set(request, auth.connection.account_id)
          await consumePushQuota(deps, auth.quota)
          connections.set(request, auth.connection)
        } catch (err) {
          throw retryable(err)
        }
      },
    },
    async (request, reply) => {
      const connection = connections.get(request)
      if (!connection) throw new AppError('unauthorized')
      const result = await acceptPushOrUpsert(withRequestLog(deps, request), {
        shape: fallbackShapeOf(request.body),
        connection,
        raw: request.rawBody!,
        body: request.body,
      })
      return reply.code(result.status).send(result.body)
    },
  )

  /** onRequest of both source routes, for the source id the path names */
  const authenticateBySource = async (request: FastifyRequest, reply: FastifyReply, sourceId: string): Promise<void> => {
    deprecate(reply)
    try {
      const { connection } = await authenticateSource(deps, sourceId, request.headers, request.query)
      accountOf.set(request, connection.account_id)
      connections.set(request, connection)
    } catch (err) {
      throw retryable(err)
    }
  }
  const bySourceHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const connection = connections.get(request)
    if (!connection) throw new AppError('unauthorized')
    const result = await acceptPushOrUpsert(withRequestLog(deps, request), {
      shape: fallbackShapeOf(request.body),
      connection,
      raw: request.rawBody!,
      body: request.body,
    })
    return reply.code(result.status).send(result.body)
  }
  app.post(
    '/api/contacts/webhook/:sourceId',
    {
      validatorCompiler: documentationOnly,
      onResponse: countAnswer,
      onRequest: (request, reply) => authenticateBySource(request, reply, request.params.sourceId),
      schema: {
        operationId: 'pushContactsBySourceFallback',
        tags: ['contacts'],
        summary: 'Deprecated origin fallback of POST /v1/contacts/{sourceId}',
        description: `${FALLBACK_NOTE} No rate limit.`,
        deprecated: true,
        security: SECURITY.sourceToken,
        params: SourceIdParams,
        querystring: TokenQuery,
        body: FallbackPushBody,
        response: { 200: PushUpsertedSync, 202: PushAccepted, ...errorResponses(400, 401, 413, 503) },
      },
    },
    bySourceHandler,
  )
  // a source id over the router's 100-character parameter limit is unknown: 401, not the router's 414
  app.post(
    '/api/contacts/webhook/*',
    {
      validatorCompiler: documentationOnly,
      onResponse: countAnswer,
      onRequest: (request, reply) => authenticateBySource(request, reply, request.params['*']),
      schema: { hide: true, params: WildcardParams },
    },
    bySourceHandler,
  )
}

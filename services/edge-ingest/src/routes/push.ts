import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Readable } from 'node:stream'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { withRequestLog } from '@lsv/shared/http/request-deps.ts'
import { documentationOnly, retryable, SourceIdParams, TokenQuery, WildcardParams } from '@lsv/shared/http/push-route-kit.ts'
import type { AccountRecord, ConnectionRecord } from '@lsv/shared/model/records.ts'
import { ContactsPushBodyDocumented, PartnerCrmContactBody, PushAccepted } from '@lsv/shared/contract/push.ts'
import { errorResponses } from '@lsv/shared/contract/errors.ts'
import { SECURITY } from '@lsv/shared/contract/security.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { resolveEdgeAccount } from '@lsv/shared/domain/tenants/resolve.ts'
import {
  authenticatePartnerCrm,
  authenticateSource,
  identifyPartnerCrmToken,
  refuseTokenlessEarly,
  type PartnerCrmCaller,
} from '@lsv/shared/domain/ingest/auth.ts'
import { presentedSourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { consumePushQuota } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { meteredBody, PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { acceptPush } from '@lsv/shared/domain/ingest/accept.ts'
import { PushActivityRecorder } from '@lsv/shared/domain/activity/push-recorder.ts'
import { acceptedRecords } from '@lsv/shared/domain/activity/push-sample.ts'
import { partnerCrmContactId, partnerCrmLocationId } from '@lsv/shared/domain/ingest/mapping.ts'
import { scanPartnerCrmLocation } from '@lsv/shared/domain/ingest/location-scan.ts'
import { deferJsonParsing, parseDeferredBody } from '@lsv/shared/http/json-body.ts'

/** What onRequest established for the handler. */
interface PushCaller {
  account: AccountRecord
  connection?: ConnectionRecord
  /** partner CRM: the location the presented token identified before the body (null: not identified) */
  identified?: PartnerCrmCaller | null
}
const callers = new WeakMap<FastifyRequest, PushCaller>()

export interface PushRouteOptions {
  /** what unauthenticated partner CRM bodies may hold (one per app: per instance) */
  preAuthBudget?: PreAuthBudget
}

const LIMITS = 'Body cap 8388608 bytes; at most 10000 records. Rate limit: 120 per 60 s and 50,000 per 24 h'

/** a partner CRM body is one JSON object (contract 4.5); anything else is 400 `invalid payload` */
function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) throw new AppError('invalid_payload')
  return body as Record<string, unknown>
}

async function send202(reply: FastifyReply, body: PushAccepted) {
  return reply.code(202).send(body)
}

/**
 * POST /v1/contacts, /v1/contacts/{sourceId}, /v1/contacts/partnercrm (contract 4.3–4.5,
 * docs/ingestion.md).
 *
 * Order of checks. 4.3 and 4.4, in onRequest, before a byte of the body is read: subdomain (404),
 * credential (401; 403 for scope or a source of another tenant), rate limit (429, counted only
 * now, so failures of routing and authentication never count). Then the body: over the cap while
 * it streams in (413 `payload too large`, nothing more buffered), JSON (400 `invalid JSON body`),
 * shape (400 `invalid payload`), record count (413 `too many contacts`), publish (503 when the
 * queue refuses), 202. The partner CRM names its location in the body. Before its body: the
 * subdomain (404); a presented token is looked up by its hash (identifying its location: the
 * caller is authenticated); a call without a token is refused at once when the account has no
 * partner CRM connection (404) or the connection is cut over (401). A body whose caller is not
 * yet authenticated is read within the pre-authentication budget (503 with Retry-After when it
 * is spent: domain/ingest/preauth-budget.ts). Then location (404), token (401), contact id (400),
 * rate limit (429; token-less calls count in windows of their own).
 */
export function registerPushRoutes(app: App, deps: PlatformDeps, options: PushRouteOptions = {}): void {
  const budget = options.preAuthBudget ?? new PreAuthBudget()

  // the portal's activity counts: every answer to a request whose account is known, counted in
  // memory after it is sent and written in batches (domain/activity/push-recorder.ts)
  const activity = new PushActivityRecorder(deps)
  const accountOf = new WeakMap<FastifyRequest, string>()
  const resolveAccount = async (request: FastifyRequest) => {
    const account = await resolveEdgeAccount(deps, request.headers.host)
    accountOf.set(request, account.id)
    return account
  }
  app.addHook('onResponse', async (request, reply) => {
    const accountId = accountOf.get(request)
    if (accountId !== undefined) activity.record(accountId, reply.statusCode)
  })
  app.addHook('onClose', async () => activity.close())
  /** acceptPush, and the accepted push's sample for the portal's mapping screens (push-sample.ts) */
  const accept = async (ctx: Parameters<typeof acceptPush>[0], input: Parameters<typeof acceptPush>[1]) => {
    const answer = await acceptPush(ctx, input)
    activity.sample(input.connection.id, input.shape, acceptedRecords(input.shape, input.body))
    return answer
  }

  /** preParsing of a partner CRM body whose caller is not authenticated yet: reserve it, or 503 */
  const budgeted = (request: FastifyRequest, reply: FastifyReply, payload: Readable, accountId: string): Readable => {
    const lease = budget.lease(accountId)
    reply.raw.once('close', () => lease.release())
    const declared = request.headers['content-length']
    if (declared === undefined) return payload.pipe(meteredBody(lease, () => budget.busy()))
    const length = Number(declared)
    // over the cap (or not a length): the body parser refuses it before reading, nothing is buffered
    if (!Number.isSafeInteger(length) || length > (request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY)) return payload
    if (!lease.take(length)) throw budget.busy()
    return payload
  }

  app.post(
    '/v1/contacts',
    {
      validatorCompiler: documentationOnly,
      schema: {
        operationId: 'pushContacts',
        tags: ['contacts'],
        summary: 'Push a batch of contacts (queued, upserted asynchronously)',
        description: `Requires scope \`contacts:write\`. Idempotent per account on (source, external_id). ${LIMITS} per API key. \`accepted\` counts the records that carry an \`external_id\`; records without one are not stored.`,
        security: SECURITY.apiKey,
        body: ContactsPushBodyDocumented,
        response: { 202: PushAccepted, ...errorResponses(400, 401, 403, 404, 413, 429, 503) },
      },
      onRequest: async (request) => {
        try {
          const account = await resolveAccount(request)
          const auth = await authenticateApiKey(deps, request.headers, { scope: 'contacts:write', account })
          await consumePushQuota(deps, { kind: 'key', keyId: auth.key.id })
          callers.set(request, { account, connection: auth.connection })
        } catch (err) {
          throw retryable(err)
        }
      },
    },
    async (request, reply) => {
      const caller = callers.get(request)
      if (!caller?.connection) throw new AppError('unauthorized')
      return send202(
        reply,
        await accept(withRequestLog(deps, request), { shape: 'contacts', connection: caller.connection, raw: request.rawBody!, body: request.body }),
      )
    },
  )

  app.post(
    '/v1/contacts/partnercrm',
    {
      validatorCompiler: documentationOnly,
      schema: {
        operationId: 'pushHighLevelContact',
        tags: ['contacts'],
        summary: 'Partner CRM contact webhook (queued, upserted asynchronously)',
        description:
          "The native webhook of the partner CRM platform. The subdomain selects the account; the body's location must be an active location of its partner CRM connection. The token is compared against the location's stored hash. Until the tokenized-URL cutover a call without any token is accepted (and flagged); after it, 401. " +
          'A missing connection or location answers exactly like an unknown subdomain (404). Body cap 8388608 bytes. Rate limit: 120 per 60 s and 50,000 per 24 h per location.',
        security: SECURITY.partnerCrm,
        querystring: TokenQuery,
        body: PartnerCrmContactBody,
        response: { 202: PushAccepted, ...errorResponses(400, 401, 404, 413, 429, 503) },
      },
      onRequest: async (request) => {
        try {
          const account = await resolveAccount(request)
          const ctx = withRequestLog(deps, request)
          const token = presentedSourceToken(request.headers, request.query)
          let identified: PartnerCrmCaller | null = null
          if (token === null) await refuseTokenlessEarly(ctx, account)
          else identified = await identifyPartnerCrmToken(ctx, account, token)
          callers.set(request, { account, identified })
        } catch (err) {
          throw retryable(err)
        }
      },
      preParsing: async (request, reply, payload) => {
        const caller = callers.get(request)
        if (!caller || caller.identified) return payload
        deferJsonParsing(request)
        return budgeted(request, reply, payload, caller.account.id)
      },
    },
    async (request, reply) => {
      const caller = callers.get(request)
      if (!caller) throw new AppError('not_found')
      const ctx = withRequestLog(deps, request)
      // identified by its token: the body was parsed, as any authenticated caller's. Not yet
      // identified: the body is still bytes (preParsing deferred it); its location is read from
      // the bytes, checked, and only then is the body parsed (issue 21, item 3)
      let record = caller.identified ? objectBody(request.body) : null
      const bodyLocation = record ? partnerCrmLocationId(record) : scanPartnerCrmLocation(request.rawBody ?? Buffer.alloc(0))
      let auth: Awaited<ReturnType<typeof authenticatePartnerCrm>>
      try {
        auth = await authenticatePartnerCrm(ctx, caller.account, bodyLocation, request.headers, request.query, caller.identified ?? null)
      } catch (err) {
        throw retryable(err)
      }
      if (!record) {
        record = objectBody(await parseDeferredBody(request))
        // the scan reads what the parse reads; were they ever to differ, the body is refused
        // rather than queued under a location it does not name
        if (partnerCrmLocationId(record) !== bodyLocation) throw new AppError('invalid_payload')
      }
      const body = record
      const locationId = auth.location.location_id
      if (partnerCrmContactId(record) === null) throw new AppError('invalid_payload')
      const accountId = caller.account.id
      await consumePushQuota(deps, auth.tokenless ? { kind: 'location-tokenless', accountId, locationId } : { kind: 'location', accountId, locationId }).catch(
        (err: unknown) => {
          throw retryable(err)
        },
      )
      return send202(reply, await accept(ctx, { shape: 'partnercrm', connection: auth.connection, raw: request.rawBody!, body, locationId }))
    },
  )

  /** onRequest of both source routes, for the source id the path names */
  const authenticateBySource = async (request: FastifyRequest, sourceId: string): Promise<void> => {
    try {
      const account = await resolveAccount(request)
      const { connection } = await authenticateSource(deps, sourceId, request.headers, request.query, account)
      // only a caller holding the source's token learns that it belongs to another tenant
      if (connection.account_id !== account.id) throw new AppError('forbidden')
      await consumePushQuota(deps, { kind: 'source', connectionId: connection.id })
      callers.set(request, { account, connection })
    } catch (err) {
      throw retryable(err)
    }
  }
  const bySourceHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = callers.get(request)
    if (!caller?.connection) throw new AppError('unauthorized')
    return send202(
      reply,
      await accept(withRequestLog(deps, request), { shape: 'contacts', connection: caller.connection, raw: request.rawBody!, body: request.body }),
    )
  }
  app.post(
    '/v1/contacts/:sourceId',
    {
      validatorCompiler: documentationOnly,
      onRequest: (request) => authenticateBySource(request, request.params.sourceId),
      schema: {
        operationId: 'pushContactsBySource',
        tags: ['contacts'],
        summary: 'Per-source inbound webhook (queued, upserted asynchronously)',
        description: `For automation platforms and custom scripts. The per-source token (header \`x-webhook-token\`, else query \`token\`) is compared in constant time against the stored hash; each record is mapped through this source's field mappings. ${LIMITS} per source.`,
        security: SECURITY.sourceToken,
        params: SourceIdParams,
        querystring: TokenQuery,
        body: ContactsPushBodyDocumented,
        response: { 202: PushAccepted, ...errorResponses(400, 401, 403, 404, 413, 429, 503) },
      },
    },
    bySourceHandler,
  )
  // the router refuses a parameter over 100 characters with its own 414; a source id that long
  // (or with a slash) is simply unknown: the same operation answers it, 401 like any unknown id
  app.post(
    '/v1/contacts/*',
    {
      validatorCompiler: documentationOnly,
      onRequest: (request) => authenticateBySource(request, request.params['*']),
      schema: { hide: true, params: WildcardParams },
    },
    bySourceHandler,
  )
}

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
import { keysOf, PushLogRecorder } from '@lsv/shared/domain/activity/push-log.ts'
import { apiKeyCredential, refusedApiKey, refusedSource } from '@lsv/shared/domain/activity/push-credentials.ts'
import type { PushCredential } from '@lsv/shared/ports/push-log.ts'
import { isAppError } from '@lsv/shared/errors/app-error.ts'
import { partnerCrmContactId, partnerCrmLocationId } from '@lsv/shared/domain/ingest/mapping.ts'
import { scanPartnerCrmLocation } from '@lsv/shared/domain/ingest/location-scan.ts'
import { deferJsonParsing, parseDeferredBody } from '@lsv/shared/http/json-body.ts'
import { StageDeadline, withinDeadline } from '@lsv/shared/http/dependency-deadline.ts'

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

/** What the inbound debugger records of a request once its connection is known (push-log.ts). */
interface Logged {
  connectionId: string
  credential: PushCredential
  accepted?: number
  keys?: string[]
  error?: string
}

/** The `error` text of an error envelope as sent (bounded), or null. */
function errorTextOf(payload: string): string | null {
  try {
    const v = JSON.parse(payload) as { error?: unknown }
    return typeof v.error === 'string' ? v.error.slice(0, 300) : null
  } catch {
    return null
  }
}

/** A partner CRM location's token (or none, before the cutover), named by its location id. */
const locationCredential = (locationId: string, tokenless: boolean): PushCredential =>
  tokenless ? { kind: 'none', id: locationId, label: null } : { kind: 'location_token', id: locationId, label: null }

/** 401 and 403: the refusals whose credential may still name a connection of the account. */
const refusedCredential = (err: unknown) => isAppError(err) && (err.code === 'unauthorized' || err.code === 'forbidden')

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
 * queue refuses), 202. The checks before the body are one dependency stage, what the handler
 * awaits after it another; a stage unsettled after EDGE_DEPENDENCY_DEADLINE_MS answers 503
 * `temporarily unavailable` with Retry-After (http/dependency-deadline.ts). The partner CRM names its location in the body. Before its body: the
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
  // dependency deadlines (http/dependency-deadline.ts): the checks before the body are one stage;
  // what the handler awaits after it (the partner CRM's checks and rate limit, the publish) another
  const deadlineMs = deps.config.edgeDependencyDeadlineMs
  const beforeBody = <A extends unknown[], T>(fn: (...args: A) => Promise<T>) => withinDeadline(deadlineMs, fn)
  const afterBodyStages = new WeakMap<FastifyRequest, StageDeadline>()
  /** the request's after-body stage, started by its first dependency call */
  const afterBody = (request: FastifyRequest): StageDeadline => {
    let stage = afterBodyStages.get(request)
    if (!stage) afterBodyStages.set(request, (stage = new StageDeadline(deadlineMs)))
    return stage
  }
  const accountOf = new WeakMap<FastifyRequest, string>()
  const resolveAccount = async (request: FastifyRequest) => {
    const account = await resolveEdgeAccount(deps, request.headers.host)
    accountOf.set(request, account.id)
    return account
  }
  // the inbound debugger: every answer to a request whose connection is known, recorded after it
  // is sent and written in batches (domain/activity/push-log.ts)
  const pushLog = new PushLogRecorder(deps)
  const logged = new WeakMap<FastifyRequest, Logged>()
  /** a refusal's connection, when its credential names one of the account's (never throws) */
  const logRefusal = async (request: FastifyRequest, err: unknown, find: (accountId: string) => Promise<Logged | null>) => {
    const accountId = accountOf.get(request)
    if (accountId === undefined || logged.has(request) || !refusedCredential(err)) return
    const found = await find(accountId).catch(() => null)
    if (found) logged.set(request, found)
  }
  app.addHook('onSend', async (request, reply, payload) => {
    const l = logged.get(request)
    if (l && reply.statusCode >= 400 && typeof payload === 'string') l.error = errorTextOf(payload) ?? undefined
    return payload
  })
  app.addHook('onResponse', async (request, reply) => {
    const accountId = accountOf.get(request)
    if (accountId !== undefined) activity.record(accountId, reply.statusCode)
    const l = logged.get(request)
    if (accountId !== undefined && l) {
      pushLog.record({
        connectionId: l.connectionId,
        accountId,
        status: reply.statusCode,
        error: reply.statusCode >= 400 ? (l.error ?? null) : null,
        accepted: l.accepted ?? null,
        keys: l.keys ?? [],
        requestId: request.id,
        headers: request.headers,
        credential: l.credential,
      })
    }
  })
  app.addHook('onClose', async () => Promise.all([activity.close(), pushLog.close()]))
  /** acceptPush, and the accepted push's sample for the portal's mapping screens (push-sample.ts) */
  const accept = async (request: FastifyRequest, ctx: Parameters<typeof acceptPush>[0], input: Parameters<typeof acceptPush>[1]) => {
    const answer = await afterBody(request).within(acceptPush(ctx, input))
    const records = acceptedRecords(input.shape, input.body)
    activity.sample(input.connection.id, input.shape, records)
    const l = logged.get(request)
    if (l) {
      l.accepted = answer.accepted
      l.keys = keysOf(records)
    }
    return answer
  }

  /** preParsing of a partner CRM body whose caller is not authenticated yet: reserve it, or 503 */
  const budgeted = (request: FastifyRequest, reply: FastifyReply, payload: Readable, accountId: string): Readable => {
    const lease = budget.lease(accountId)
    reply.raw.once('close', () => lease.release())
    const declared = request.headers['content-length']
    if (declared === undefined) return payload.pipe(meteredBody(budget, lease))
    const length = Number(declared)
    // over the cap (or not a length): the body parser refuses it before reading, nothing is buffered
    if (!Number.isSafeInteger(length) || length > (request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY)) return payload
    if (!lease.take(length)) throw budget.busy()
    return payload.pipe(meteredBody(budget, lease, true))
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
      onRequest: beforeBody(async (request: FastifyRequest) => {
        try {
          const account = await resolveAccount(request)
          const auth = await authenticateApiKey(deps, request.headers, { scope: 'contacts:write', account }).catch(async (err: unknown) => {
            await logRefusal(request, err, async (accountId) => {
              const key = await refusedApiKey(deps, request.headers, accountId)
              return key ? { connectionId: key.connection_id, credential: apiKeyCredential(key) } : null
            })
            throw err
          })
          logged.set(request, { connectionId: auth.connection.id, credential: apiKeyCredential(auth.key) })
          await consumePushQuota(deps, { kind: 'key', keyId: auth.key.id })
          callers.set(request, { account, connection: auth.connection })
        } catch (err) {
          throw retryable(err)
        }
      }),
    },
    async (request, reply) => {
      const caller = callers.get(request)
      if (!caller?.connection) throw new AppError('unauthorized')
      return send202(
        reply,
        await accept(request, withRequestLog(deps, request), { shape: 'contacts', connection: caller.connection, raw: request.rawBody!, body: request.body }),
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
      onRequest: beforeBody(async (request: FastifyRequest) => {
        try {
          const account = await resolveAccount(request)
          const ctx = withRequestLog(deps, request)
          const token = presentedSourceToken(request.headers, request.query)
          let identified: PartnerCrmCaller | null = null
          if (token === null) await refuseTokenlessEarly(ctx, account)
          else identified = await identifyPartnerCrmToken(ctx, account, token)
          if (identified)
            logged.set(request, { connectionId: identified.connection.id, credential: locationCredential(identified.location.location_id, false) })
          callers.set(request, { account, identified })
        } catch (err) {
          throw retryable(err)
        }
      }),
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
        auth = await afterBody(request).within(
          authenticatePartnerCrm(ctx, caller.account, bodyLocation, request.headers, request.query, caller.identified ?? null),
        )
      } catch (err) {
        throw retryable(err)
      }
      logged.set(request, { connectionId: auth.connection.id, credential: locationCredential(auth.location.location_id, auth.tokenless) })
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
      await afterBody(request)
        .within(consumePushQuota(deps, auth.tokenless ? { kind: 'location-tokenless', accountId, locationId } : { kind: 'location', accountId, locationId }))
        .catch((err: unknown) => {
          throw retryable(err)
        })
      return send202(reply, await accept(request, ctx, { shape: 'partnercrm', connection: auth.connection, raw: request.rawBody!, body, locationId }))
    },
  )

  /** onRequest of both source routes, for the source id the path names */
  const authenticateBySource = beforeBody(async (request: FastifyRequest, sourceId: string): Promise<void> => {
    try {
      const account = await resolveAccount(request)
      const { connection } = await authenticateSource(deps, sourceId, request.headers, request.query, account).catch(async (err: unknown) => {
        await logRefusal(request, err, (accountId) => refusedSource(deps, sourceId, request.headers, request.query, accountId))
        throw err
      })
      logged.set(request, { connectionId: connection.id, credential: { kind: 'source_token', id: null, label: null } })
      // only a caller holding the source's token learns that it belongs to another tenant
      if (connection.account_id !== account.id) throw new AppError('forbidden')
      await consumePushQuota(deps, { kind: 'source', connectionId: connection.id })
      callers.set(request, { account, connection })
    } catch (err) {
      throw retryable(err)
    }
  })
  const bySourceHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = callers.get(request)
    if (!caller?.connection) throw new AppError('unauthorized')
    return send202(
      reply,
      await accept(request, withRequestLog(deps, request), { shape: 'contacts', connection: caller.connection, raw: request.rawBody!, body: request.body }),
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

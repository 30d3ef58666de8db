import type { FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify'
import type { App } from '@lsv/shared/http/base-app.ts'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { withRequestLog } from '@lsv/shared/http/request-deps.ts'
import { documentationOnly, retryable } from '@lsv/shared/http/push-route-kit.ts'
import { AppError, isAppError } from '@lsv/shared/errors/app-error.ts'
import { authenticateApiKey } from '@lsv/shared/domain/auth/authenticate-api-key.ts'
import { resolveEdgeAccount } from '@lsv/shared/domain/tenants/resolve.ts'
import { authenticateSource } from '@lsv/shared/domain/ingest/auth.ts'
import { consumePushQuota } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { checkPush, queuePush } from '@lsv/shared/domain/ingest/accept.ts'
import { deferJsonParsing, useDeferredBody } from '@lsv/shared/http/json-body.ts'
import { apiKeyCredential, refusedApiKey, refusedSource } from '@lsv/shared/domain/activity/push-credentials.ts'
import { tellListenersNow } from '@lsv/shared/domain/outcomes/tell.ts'
import { withinDeadline } from '@lsv/shared/http/dependency-deadline.ts'
import { decoratePushRequests, type Accept, keepErrorText, keepProblem, nameConnection, pushAnsweredOf, stateOf } from './push-state.ts'
import { budgetedBody, identifyPartnerCrmCaller, pushPartnerCrm } from './partner-crm-push.ts'
import { bySourceSchema, bySourceWildcardSchema, partnerCrmSchema, pushContactsSchema } from './push-schemas.ts'

export interface PushRouteOptions {
  /** what unauthenticated partner CRM bodies may hold (one per app: per instance) */
  preAuthBudget?: PreAuthBudget
}

/**
 * preParsing of the contacts routes: the body stays bytes until the handler checks it
 * (useDeferredBody), so the parsed body is never on the request: while a batch's publish is
 * awaited it holds its bytes, not its parse too (docs/performance.md, "Fourth pass: the 8 MiB batch").
 */
const checkedInHandler: preParsingHookHandler = (request, _reply, payload, done) => {
  deferJsonParsing(request)
  done(null, payload)
}

/** 401 and 403: the refusals whose credential may still name a connection of the account. */
const refusedCredential = (err: unknown) => isAppError(err) && (err.code === 'unauthorized' || err.code === 'forbidden')

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
 * `temporarily unavailable` with Retry-After (http/dependency-deadline.ts). The partner CRM
 * (partner-crm-push.ts) names its location in the body: before its body the subdomain (404) and a
 * presented token (looked up by its hash) or, without one, an early refusal (404 no connection,
 * 401 cut over); its unauthenticated body is read within the pre-authentication budget (503).
 *
 * Every answer is told to the push listeners as one PushAnswered, from the one onResponse hook
 * below, after it is sent (platform/listeners.ts: the inbound debugger, activity counts and
 * samples); the routes name no observer.
 */
export function registerPushRoutes(app: App, deps: PlatformDeps, options: PushRouteOptions = {}): void {
  const budget = options.preAuthBudget ?? new PreAuthBudget()
  const deadlineMs = deps.config.edgeDependencyDeadlineMs
  // the checks before the body are one dependency stage (http/dependency-deadline.ts)
  const beforeBody = <A extends unknown[], T>(fn: (...args: A) => Promise<T>) => withinDeadline(deadlineMs, fn)

  decoratePushRequests(app)
  app.addHook('onSend', keepErrorText)
  app.addHook('onError', keepProblem)
  app.addHook('onResponse', (request, reply, done) => {
    const answered = pushAnsweredOf(request, reply)
    if (answered) tellListenersNow(deps.listeners.push, deps, (l) => l.onPushAnswered(answered, deps))
    done()
  })
  app.addHook('onClose', async () => deps.listeners.flush())

  const resolveAccount = async (request: FastifyRequest) => {
    const account = await resolveEdgeAccount(deps, request.headers.host)
    stateOf(request).account = account
    return account
  }
  /** a refusal's connection, when its credential names one of the account's (never throws) */
  const nameRefused = async (
    request: FastifyRequest,
    err: unknown,
    find: (accountId: string) => Promise<{ connectionId: string; credential: Parameters<typeof nameConnection>[2] } | null>,
  ) => {
    const state = stateOf(request)
    if (!state.account || state.named || !refusedCredential(err)) return
    const found = await find(state.account.id).catch(() => null)
    if (found) nameConnection(request, found.connectionId, found.credential)
  }
  const accept: Accept = async (request, ctx, push) => {
    // not raced with the deadline: once the publish has started, a 503 could be a batch that is
    // queued after all (issue 31). The answer waits for the publish's own result: 202 when it
    // held, 503 when the queue refused it (bounded by the queue client's own timeout).
    const answer = await queuePush(ctx, push)
    stateOf(request).accepted = { count: answer.accepted, shape: push.shape, records: push.records }
    return answer
  }
  const acceptContacts = async (request: FastifyRequest, reply: FastifyReply) => {
    const { connection } = stateOf(request)
    if (!connection) throw new AppError('unauthorized')
    const ctx = withRequestLog(deps, request)
    const raw = request.rawBody!
    // parsed (400), checked (400 / 413) and counted in one call: of the parsed body only what
    // the answer and the listeners need outlives it (accept.ts CheckedPush)
    const push = await useDeferredBody(request, (body) => checkPush(ctx, { shape: 'contacts', connection, raw, body }))
    return reply.code(202).send(await accept(request, ctx, push))
  }

  const authenticateByKey = beforeBody(async (request: FastifyRequest) => {
    try {
      const account = await resolveAccount(request)
      const auth = await authenticateApiKey(deps, request.headers, { scope: 'contacts:write', account }).catch(async (err: unknown) => {
        await nameRefused(request, err, async (accountId) => {
          const key = await refusedApiKey(deps, request.headers, accountId)
          return key ? { connectionId: key.connection_id, credential: apiKeyCredential(key) } : null
        })
        throw err
      })
      nameConnection(request, auth.connection.id, apiKeyCredential(auth.key))
      await consumePushQuota(deps, { kind: 'key', keyId: auth.key.id })
      stateOf(request).connection = auth.connection
    } catch (err) {
      throw retryable(err)
    }
  })
  app.post(
    '/v1/contacts',
    { validatorCompiler: documentationOnly, schema: pushContactsSchema, onRequest: authenticateByKey, preParsing: checkedInHandler },
    acceptContacts,
  )

  app.post(
    '/v1/contacts/partnercrm',
    {
      validatorCompiler: documentationOnly,
      schema: partnerCrmSchema,
      onRequest: beforeBody(async (request: FastifyRequest) => {
        try {
          await identifyPartnerCrmCaller(deps, request, await resolveAccount(request))
        } catch (err) {
          throw retryable(err)
        }
      }),
      preParsing: async (request, reply, payload) => budgetedBody(budget, request, reply, payload),
    },
    async (request, reply) => reply.code(202).send(await pushPartnerCrm(deps, request, accept)),
  )

  /** onRequest of both source routes, for the source id the path names */
  const authenticateBySource = beforeBody(async (request: FastifyRequest, sourceId: string): Promise<void> => {
    try {
      const account = await resolveAccount(request)
      const { connection } = await authenticateSource(deps, sourceId, request.headers, request.query, account).catch(async (err: unknown) => {
        await nameRefused(request, err, (accountId) => refusedSource(deps, sourceId, request.headers, request.query, accountId))
        throw err
      })
      nameConnection(request, connection.id, { kind: 'source_token', id: null, label: null })
      // only a caller holding the source's token learns that it belongs to another tenant
      if (connection.account_id !== account.id) throw new AppError('forbidden')
      await consumePushQuota(deps, { kind: 'source', connectionId: connection.id })
      stateOf(request).connection = connection
    } catch (err) {
      throw retryable(err)
    }
  })
  app.post(
    '/v1/contacts/:sourceId',
    {
      validatorCompiler: documentationOnly,
      schema: bySourceSchema,
      onRequest: (request) => authenticateBySource(request, request.params.sourceId),
      preParsing: checkedInHandler,
    },
    acceptContacts,
  )
  // a source id over 100 characters (or with a slash) is simply unknown: the same operation answers it, 401 like any unknown id
  app.post(
    '/v1/contacts/*',
    {
      validatorCompiler: documentationOnly,
      schema: bySourceWildcardSchema,
      onRequest: (request) => authenticateBySource(request, request.params['*']),
      preParsing: checkedInHandler,
    },
    acceptContacts,
  )
}

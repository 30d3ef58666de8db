import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Readable } from 'node:stream'
import type { PlatformDeps } from '@lsv/shared/ports/deps.ts'
import { withRequestLog } from '@lsv/shared/http/request-deps.ts'
import { retryable } from '@lsv/shared/http/push-route-kit.ts'
import { AppError } from '@lsv/shared/errors/app-error.ts'
import { authenticatePartnerCrm, identifyPartnerCrmToken, refuseTokenlessEarly } from '@lsv/shared/domain/ingest/auth.ts'
import { presentedSourceToken } from '@lsv/shared/domain/auth/verify-source-token.ts'
import { consumePushQuota } from '@lsv/shared/domain/ingest/rate-limit.ts'
import { meteredBody, type PreAuthBudget } from '@lsv/shared/domain/ingest/preauth-budget.ts'
import { partnerCrmContactId, partnerCrmLocationId } from '@lsv/shared/domain/ingest/mapping.ts'
import { scanPartnerCrmLocation } from '@lsv/shared/domain/ingest/location-scan.ts'
import { deferJsonParsing, parseDeferredBody } from '@lsv/shared/http/json-body.ts'
import type { PushCredential } from '@lsv/shared/ports/push-log.ts'
import type { AccountRecord } from '@lsv/shared/model/records.ts'
import { afterBodyStage, nameConnection, stateOf, type Accept } from './push-state.ts'
import { invalidPayload } from '@lsv/shared/domain/ingest/payload-problem.ts'
import { checkPush } from '@lsv/shared/domain/ingest/accept.ts'

/* POST /v1/contacts/partnercrm (contract 4.5): the partner CRM names its location in the body. */

/** why a body without a contact id is refused (the inbound debugger shows it: domain/ingest/payload-problem.ts) */
const NO_CONTACT_ID = 'no contact id (contactId, contact_id or id)'

/** a partner CRM body is one JSON object (contract 4.5); anything else is 400 `invalid payload` */
function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) throw invalidPayload('', 'the body is not a JSON object')
  return body as Record<string, unknown>
}

/** A partner CRM location's token (or none, before the cutover), named by its location id. */
const locationCredential = (locationId: string, tokenless: boolean): PushCredential =>
  tokenless ? { kind: 'none', id: locationId, label: null } : { kind: 'location_token', id: locationId, label: null }

/** onRequest, before the body: a presented token is looked up by its hash; a call without one may be refused at once. */
export async function identifyPartnerCrmCaller(deps: PlatformDeps, request: FastifyRequest, account: AccountRecord): Promise<void> {
  const ctx = withRequestLog(deps, request)
  const token = presentedSourceToken(request.headers, request.query)
  const state = stateOf(request)
  if (token === null) await refuseTokenlessEarly(ctx, account)
  else state.identified = await identifyPartnerCrmToken(ctx, account, token)
  if (state.identified) nameConnection(request, state.identified.connection.id, locationCredential(state.identified.location.location_id, false))
}

/**
 * preParsing: a body whose caller is not identified yet stays bytes (parsed only once its
 * location is checked) and is read within the pre-authentication budget, or 503.
 */
export function budgetedBody(budget: PreAuthBudget, request: FastifyRequest, reply: FastifyReply, payload: Readable): Readable {
  const state = stateOf(request)
  if (!state.account || state.identified) return payload
  deferJsonParsing(request)
  const lease = budget.lease(state.account.id)
  reply.raw.once('close', () => lease.release())
  const declared = request.headers['content-length']
  if (declared === undefined) return payload.pipe(meteredBody(budget, lease))
  const length = Number(declared)
  // over the cap (or not a length): the body parser refuses it before reading, nothing is buffered
  if (!Number.isSafeInteger(length) || length > (request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY)) return payload
  if (!lease.take(length)) throw budget.busy()
  return payload.pipe(meteredBody(budget, lease, true))
}

/**
 * The handler. Identified by its token: the body was parsed, as any authenticated caller's; then
 * the contact id (400) and the location's rate limit (429). Not yet identified: its location is
 * read from the bytes and checked (issue 21, item 3), then its rate limit (429; token-less calls
 * count in windows of their own), and only then is the body parsed and its contact id checked:
 * a rate-limited location's body is never parsed (issue 31).
 */
export async function pushPartnerCrm(deps: PlatformDeps, request: FastifyRequest, accept: Accept) {
  const { account, identified } = stateOf(request)
  if (!account) throw new AppError('not_found')
  const ctx = withRequestLog(deps, request)
  const stage = afterBodyStage(request, deps.config.edgeDependencyDeadlineMs)
  let record = identified ? objectBody(request.body) : null
  const bodyLocation = record ? partnerCrmLocationId(record) : scanPartnerCrmLocation(request.rawBody ?? Buffer.alloc(0))
  const auth = await stage.within(authenticatePartnerCrm(ctx, account, bodyLocation, request.headers, request.query, identified)).catch((err: unknown) => {
    throw retryable(err)
  })
  const locationId = auth.location.location_id
  nameConnection(request, auth.connection.id, locationCredential(locationId, auth.tokenless))
  const quota = auth.tokenless
    ? ({ kind: 'location-tokenless', accountId: account.id, locationId } as const)
    : ({ kind: 'location', accountId: account.id, locationId } as const)
  const countPush = () =>
    stage.within(consumePushQuota(deps, quota)).catch((err: unknown) => {
      throw retryable(err)
    })
  if (record) {
    if (partnerCrmContactId(record) === null) throw invalidPayload('/contactId', NO_CONTACT_ID)
    await countPush()
  } else {
    // still bytes: the location's rate limit first, so a limited location costs no parse (issue 31)
    await countPush()
    record = objectBody(await parseDeferredBody(request))
    // the scan reads what the parse reads; were they ever to differ, the body is refused
    // rather than queued under a location it does not name
    if (partnerCrmLocationId(record) !== bodyLocation) throw new AppError('invalid_payload')
    if (partnerCrmContactId(record) === null) throw invalidPayload('/contactId', NO_CONTACT_ID)
  }
  const push = await checkPush(ctx, { shape: 'partnercrm', connection: auth.connection, raw: request.rawBody!, body: record, locationId })
  return accept(request, ctx, push)
}
